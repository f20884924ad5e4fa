#pragma once
// MXFP4 routed-expert weights of DeepSeek-V4/V4.1 (model-spec §3.1): e2m1 codes, two per byte
// (low nibble = element 2j along K), stored as I8 [rows = out, cols / 2]; one e8m0 scale per 32
// consecutive K elements, `<name>.scale` F8_E8M0 [rows, cols / 32]. w = e2m1 * 2^(byte - 127).

#include <cstdint>
#include <span>
#include <vector>

#include "engine/common/status.h"
#include "engine/formats/matrix_dims.h"

namespace gcmoe::formats {

inline constexpr std::int64_t kMxfp4BlockK = 32;

struct Mxfp4Weight {
  MatrixDims dims;                   // logical [out, in]
  std::vector<std::uint8_t> packed;  // [rows, cols / 2]
  std::vector<std::uint8_t> scales;  // e8m0 [rows, cols / 32]
};

// The on-disk shapes of a logical [rows, cols] weight.
inline MatrixDims mxfp4_packed_dims(MatrixDims const dims) {
  return {dims.rows, dims.cols / 2};
}
inline MatrixDims mxfp4_scale_dims(MatrixDims const dims) {
  return {dims.rows, dims.cols / kMxfp4BlockK};
}

// DeepSeek reference recipe (`fp4_act_quant` with e8m0 scales): amax = max(|block|, 6 * 2^-126);
// scale = 2^ceil(log2(amax * (1/6))) so that amax / scale <= 6; codes = e2m1(clamp(w / scale,
// ±6)), ties to the even code. cols must be a multiple of 32.
StatusOr<Mxfp4Weight> quantize_mxfp4(std::span<float const> weight, MatrixDims dims);

// Dequantize into `out` (rows × cols fp32); a NaN scale byte (255) gives NaN elements.
Status dequantize_mxfp4(std::span<std::uint8_t const> packed, std::span<std::uint8_t const> scales,
                        MatrixDims dims, std::span<float> out);

}  // namespace gcmoe::formats
