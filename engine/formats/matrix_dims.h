#pragma once
// Dimensions shared by the block formats: a weight is row-major [rows = out, cols = in (K)], and
// its scales cover blocks of `block.rows × block.cols` elements; edge blocks may be partial.

#include <cstdint>
#include <span>

#include "engine/common/status.h"

namespace gcmoe::formats {

struct MatrixDims {
  std::int64_t rows = 0;
  std::int64_t cols = 0;

  std::int64_t elements() const { return rows * cols; }
  friend bool operator==(MatrixDims const&, MatrixDims const&) = default;
};

struct BlockShape {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
};

// V4 weights: 128×128; V4.1: 32×32; GLM-5.2 (f32 scales): 128×128.
inline constexpr BlockShape kBlock128{128, 128};
inline constexpr BlockShape kBlock32{32, 32};

// The scale tensor's shape: [ceil(rows / block.rows), ceil(cols / block.cols)].
inline MatrixDims scale_dims(MatrixDims const weight, BlockShape const block) {
  return {(weight.rows + block.rows - 1) / block.rows, (weight.cols + block.cols - 1) / block.cols};
}

// INVALID_ARGUMENT unless dims and block are positive and small enough that element counts fit.
Status check_block_dims(MatrixDims weight, BlockShape block);

// INVALID_ARGUMENT naming the first NaN or infinite value: quantizers take finite inputs only.
Status check_finite(std::span<float const> values);

}  // namespace gcmoe::formats
