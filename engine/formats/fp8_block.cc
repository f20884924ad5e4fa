#include "engine/formats/fp8_block.h"

#include <algorithm>
#include <cmath>

#include "engine/common/check.h"
#include "engine/formats/e4m3.h"
#include "engine/formats/e8m0.h"

namespace gcmoe::formats {
namespace {

// Both recipes clamp amax from below so an all-zero block gets a finite, tiny scale.
constexpr float kMinAmax = 1e-4f;

Status check_sizes(std::size_t const values, std::size_t const scales, MatrixDims const dims,
                   BlockShape const block, std::size_t const out) {
  GCMOE_RETURN_IF_ERROR(check_block_dims(dims, block));
  MatrixDims const sdims = scale_dims(dims, block);
  auto const elements = static_cast<std::size_t>(dims.elements());
  GCMOE_CHECK_ARG(values == elements, "{} weight elements for dims [{}, {}] (want {})", values,
                  dims.rows, dims.cols, elements);
  GCMOE_CHECK_ARG(scales == static_cast<std::size_t>(sdims.elements()),
                  "{} scales for dims [{}, {}] in {}x{} blocks (want [{}, {}])", scales, dims.rows,
                  dims.cols, block.rows, block.cols, sdims.rows, sdims.cols);
  GCMOE_CHECK_ARG(out == elements, "output holds {} elements, want {}", out, elements);
  return Status();
}

// Calls fn(row_begin, row_end, col_begin, col_end, scale_index) for every block.
template <typename Fn>
void for_each_block(MatrixDims const dims, BlockShape const block, Fn&& fn) {
  MatrixDims const sdims = scale_dims(dims, block);
  for (std::int64_t br = 0; br < sdims.rows; ++br) {
    for (std::int64_t bc = 0; bc < sdims.cols; ++bc) {
      std::int64_t const r0 = br * block.rows;
      std::int64_t const c0 = bc * block.cols;
      fn(r0, std::min(r0 + block.rows, dims.rows), c0, std::min(c0 + block.cols, dims.cols),
         br * sdims.cols + bc);
    }
  }
}

float block_amax(std::span<float const> w, std::int64_t const cols, std::int64_t const r0,
                 std::int64_t const r1, std::int64_t const c0, std::int64_t const c1) {
  float amax = 0.0f;
  for (std::int64_t r = r0; r < r1; ++r) {
    for (std::int64_t c = c0; c < c1; ++c) {
      amax = std::max(amax, std::fabs(w[static_cast<std::size_t>(r * cols + c)]));
    }
  }
  return std::max(amax, kMinAmax);
}

void encode_block(std::span<float const> w, std::int64_t const cols, std::int64_t const r0,
                  std::int64_t const r1, std::int64_t const c0, std::int64_t const c1,
                  float const scale, std::vector<std::uint8_t>& codes) {
  for (std::int64_t r = r0; r < r1; ++r) {
    for (std::int64_t c = c0; c < c1; ++c) {
      auto const i = static_cast<std::size_t>(r * cols + c);
      codes[i] = encode_e4m3(std::clamp(w[i] / scale, -kE4m3Max, kE4m3Max));
    }
  }
}

template <typename ScaleAt>
void decode_blocks(std::span<std::uint8_t const> codes, MatrixDims const dims,
                   BlockShape const block, ScaleAt&& scale_at, std::span<float> out) {
  for_each_block(
      dims, block,
      [&](std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1, std::int64_t s) {
        float const scale = scale_at(s);
        for (std::int64_t r = r0; r < r1; ++r) {
          for (std::int64_t c = c0; c < c1; ++c) {
            auto const i = static_cast<std::size_t>(r * dims.cols + c);
            out[i] = decode_e4m3(codes[i]) * scale;
          }
        }
      });
}

}  // namespace

StatusOr<Fp8E8m0Blocks> quantize_fp8_e8m0(std::span<float const> weight, MatrixDims const dims,
                                          BlockShape const block) {
  GCMOE_RETURN_IF_ERROR(check_block_dims(dims, block));  // before dividing by the block
  MatrixDims const sdims = scale_dims(dims, block);
  GCMOE_RETURN_IF_ERROR(check_sizes(weight.size(), static_cast<std::size_t>(sdims.elements()), dims,
                                    block, weight.size()));
  GCMOE_RETURN_IF_ERROR(check_finite(weight));
  Fp8E8m0Blocks result{dims, block, std::vector<std::uint8_t>(weight.size()),
                       std::vector<std::uint8_t>(static_cast<std::size_t>(sdims.elements()))};
  for_each_block(
      dims, block,
      [&](std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1, std::int64_t s) {
        float const amax = block_amax(weight, dims.cols, r0, r1, c0, c1);
        int const exponent = log2_ceil(amax * (1.0f / kE4m3Max));
        result.scales[static_cast<std::size_t>(s)] = e8m0_from_exponent(exponent);
        encode_block(weight, dims.cols, r0, r1, c0, c1, std::ldexp(1.0f, exponent), result.codes);
      });
  return result;
}

StatusOr<Fp8F32Blocks> quantize_fp8_f32(std::span<float const> weight, MatrixDims const dims,
                                        BlockShape const block) {
  GCMOE_RETURN_IF_ERROR(check_block_dims(dims, block));  // before dividing by the block
  MatrixDims const sdims = scale_dims(dims, block);
  GCMOE_RETURN_IF_ERROR(check_sizes(weight.size(), static_cast<std::size_t>(sdims.elements()), dims,
                                    block, weight.size()));
  GCMOE_RETURN_IF_ERROR(check_finite(weight));
  Fp8F32Blocks result{dims, block, std::vector<std::uint8_t>(weight.size()),
                      std::vector<float>(static_cast<std::size_t>(sdims.elements()))};
  for_each_block(
      dims, block,
      [&](std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1, std::int64_t s) {
        float const scale = block_amax(weight, dims.cols, r0, r1, c0, c1) / kE4m3Max;
        result.scale_inv[static_cast<std::size_t>(s)] = scale;
        encode_block(weight, dims.cols, r0, r1, c0, c1, scale, result.codes);
      });
  return result;
}

Status dequantize_fp8_e8m0(std::span<std::uint8_t const> codes,
                           std::span<std::uint8_t const> scales, MatrixDims const dims,
                           BlockShape const block, std::span<float> out) {
  GCMOE_RETURN_IF_ERROR(check_sizes(codes.size(), scales.size(), dims, block, out.size()));
  decode_blocks(
      codes, dims, block,
      [&](std::int64_t s) { return decode_e8m0(scales[static_cast<std::size_t>(s)]); }, out);
  return Status();
}

Status dequantize_fp8_f32(std::span<std::uint8_t const> codes, std::span<float const> scale_inv,
                          MatrixDims const dims, BlockShape const block, std::span<float> out) {
  GCMOE_RETURN_IF_ERROR(check_sizes(codes.size(), scale_inv.size(), dims, block, out.size()));
  decode_blocks(
      codes, dims, block, [&](std::int64_t s) { return scale_inv[static_cast<std::size_t>(s)]; },
      out);
  return Status();
}

}  // namespace gcmoe::formats
