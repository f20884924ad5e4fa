#include "engine/formats/mxfp4.h"

#include <algorithm>
#include <cmath>

#include "engine/common/check.h"
#include "engine/formats/e2m1.h"
#include "engine/formats/e8m0.h"

namespace gcmoe::formats {
namespace {

// Smallest amax the reference admits: keeps the scale exponent >= -126.
constexpr float kMinAmax = kE2m1Max * 0x1p-126f;

Status check_mxfp4_sizes(MatrixDims const dims, std::size_t const packed, std::size_t const scales,
                         std::size_t const values) {
  GCMOE_RETURN_IF_ERROR(check_block_dims(dims, {1, kMxfp4BlockK}));
  GCMOE_CHECK_ARG(dims.cols % kMxfp4BlockK == 0, "MXFP4 K = {} is not a multiple of {}", dims.cols,
                  kMxfp4BlockK);
  GCMOE_CHECK_ARG(packed == static_cast<std::size_t>(mxfp4_packed_dims(dims).elements()),
                  "{} packed bytes for [{}, {}] (want {})", packed, dims.rows, dims.cols,
                  mxfp4_packed_dims(dims).elements());
  GCMOE_CHECK_ARG(scales == static_cast<std::size_t>(mxfp4_scale_dims(dims).elements()),
                  "{} scales for [{}, {}] (want {})", scales, dims.rows, dims.cols,
                  mxfp4_scale_dims(dims).elements());
  GCMOE_CHECK_ARG(values == static_cast<std::size_t>(dims.elements()),
                  "{} fp32 values for [{}, {}] (want {})", values, dims.rows, dims.cols,
                  dims.elements());
  return Status();
}

}  // namespace

StatusOr<Mxfp4Weight> quantize_mxfp4(std::span<float const> weight, MatrixDims const dims) {
  MatrixDims const packed_dims = mxfp4_packed_dims(dims);
  MatrixDims const sdims = mxfp4_scale_dims(dims);
  GCMOE_RETURN_IF_ERROR(check_mxfp4_sizes(dims, static_cast<std::size_t>(packed_dims.elements()),
                                          static_cast<std::size_t>(sdims.elements()),
                                          weight.size()));
  GCMOE_RETURN_IF_ERROR(check_finite(weight));
  Mxfp4Weight result{dims,
                     std::vector<std::uint8_t>(static_cast<std::size_t>(packed_dims.elements())),
                     std::vector<std::uint8_t>(static_cast<std::size_t>(sdims.elements()))};
  std::uint8_t codes[kMxfp4BlockK];
  for (std::int64_t r = 0; r < dims.rows; ++r) {
    for (std::int64_t b = 0; b < sdims.cols; ++b) {
      std::span<float const> const block =
          weight.subspan(static_cast<std::size_t>(r * dims.cols + b * kMxfp4BlockK), kMxfp4BlockK);
      float amax = kMinAmax;
      for (float const v : block) {
        amax = std::max(amax, std::fabs(v));
      }
      int const exponent = log2_ceil(amax * (1.0f / kE2m1Max));
      float const scale = std::ldexp(1.0f, exponent);
      result.scales[static_cast<std::size_t>(r * sdims.cols + b)] = e8m0_from_exponent(exponent);
      for (std::int64_t k = 0; k < kMxfp4BlockK; ++k) {
        codes[k] = encode_e2m1(
            std::clamp(block[static_cast<std::size_t>(k)] / scale, -kE2m1Max, kE2m1Max));
      }
      std::size_t const out = static_cast<std::size_t>(r * packed_dims.cols + b * kMxfp4BlockK / 2);
      for (std::int64_t j = 0; j < kMxfp4BlockK / 2; ++j) {
        result.packed[out + static_cast<std::size_t>(j)] =
            pack_e2m1_pair(codes[2 * j], codes[2 * j + 1]);
      }
    }
  }
  return result;
}

Status dequantize_mxfp4(std::span<std::uint8_t const> packed, std::span<std::uint8_t const> scales,
                        MatrixDims const dims, std::span<float> out) {
  GCMOE_RETURN_IF_ERROR(check_mxfp4_sizes(dims, packed.size(), scales.size(), out.size()));
  std::int64_t const packed_cols = dims.cols / 2;
  std::int64_t const scale_cols = dims.cols / kMxfp4BlockK;
  for (std::int64_t r = 0; r < dims.rows; ++r) {
    for (std::int64_t j = 0; j < packed_cols; ++j) {
      std::uint8_t const byte = packed[static_cast<std::size_t>(r * packed_cols + j)];
      float const scale =
          decode_e8m0(scales[static_cast<std::size_t>(r * scale_cols + 2 * j / kMxfp4BlockK)]);
      auto const i = static_cast<std::size_t>(r * dims.cols + 2 * j);
      out[i] = decode_e2m1(byte & 0xf) * scale;
      out[i + 1] = decode_e2m1(static_cast<std::uint8_t>(byte >> 4)) * scale;
    }
  }
  return Status();
}

}  // namespace gcmoe::formats
