#pragma once
// Block-scaled FP8 e4m3 weights, the two ways the releases store them (model-spec §3.1):
//   - e8m0 scales (`<name>.scale`, F8_E8M0): DeepSeek-V4 dense 128×128, V4.1 32×32, V4.1 Engram
//     tables 1×32; w = e4m3 * 2^(byte - 127);
//   - f32 scales (`<name>.weight_scale_inv`, F32): GLM-5.2-FP8 128×128; w = e4m3 * scale_inv.
// Weights are row-major [rows = out, cols = in]; scales are row-major [ceil(rows/B_r),
// ceil(cols/B_c)].

#include <cstdint>
#include <span>
#include <vector>

#include "engine/common/status.h"
#include "engine/formats/matrix_dims.h"

namespace gcmoe::formats {

struct Fp8E8m0Blocks {
  MatrixDims dims;
  BlockShape block;
  std::vector<std::uint8_t> codes;   // e4m3, dims.rows × dims.cols
  std::vector<std::uint8_t> scales;  // e8m0, scale_dims(dims, block)
};

struct Fp8F32Blocks {
  MatrixDims dims;
  BlockShape block;
  std::vector<std::uint8_t> codes;  // e4m3, dims.rows × dims.cols
  std::vector<float> scale_inv;     // scale_dims(dims, block); multiply to dequantize
};

// DeepSeek recipe (reference `act_quant` with scale_fmt ue8m0, DeepGEMM `per_block_cast_to_fp8`
// with ue8m0): amax = max(|block|, 1e-4); scale = 2^ceil(log2(amax * (1/448))), a power of two so
// that amax / scale <= 448; codes = e4m3(clamp(w / scale, ±448)).
StatusOr<Fp8E8m0Blocks> quantize_fp8_e8m0(std::span<float const> weight, MatrixDims dims,
                                          BlockShape block);

// GLM-5.2 recipe (DeepGEMM `per_block_cast_to_fp8`, fp32 scales): amax = max(|block|, 1e-4);
// scale_inv = amax / 448; codes = e4m3(clamp(w / scale_inv, ±448)).
StatusOr<Fp8F32Blocks> quantize_fp8_f32(std::span<float const> weight, MatrixDims dims,
                                        BlockShape block);

// Dequantize into `out` (dims.rows × dims.cols fp32). A NaN scale byte (255) or NaN code gives
// NaN elements, as the hardware would; sizes are checked against dims and block.
Status dequantize_fp8_e8m0(std::span<std::uint8_t const> codes,
                           std::span<std::uint8_t const> scales, MatrixDims dims, BlockShape block,
                           std::span<float> out);
Status dequantize_fp8_f32(std::span<std::uint8_t const> codes, std::span<float const> scale_inv,
                          MatrixDims dims, BlockShape block, std::span<float> out);

}  // namespace gcmoe::formats
