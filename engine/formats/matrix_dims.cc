#include "engine/formats/matrix_dims.h"

#include <cmath>

#include "engine/common/check.h"

namespace gcmoe::formats {

Status check_block_dims(MatrixDims const weight, BlockShape const block) {
  // 2^31 per side keeps rows * cols (and byte counts) far from int64 overflow.
  constexpr std::int64_t kMaxSide = std::int64_t{1} << 31;
  GCMOE_CHECK_ARG(
      weight.rows > 0 && weight.cols > 0 && weight.rows < kMaxSide && weight.cols < kMaxSide,
      "matrix dims [{}, {}] must be positive and below 2^31", weight.rows, weight.cols);
  GCMOE_CHECK_ARG(block.rows > 0 && block.cols > 0, "block shape [{}, {}] must be positive",
                  block.rows, block.cols);
  return Status();
}

Status check_finite(std::span<float const> values) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    GCMOE_CHECK_ARG(std::isfinite(values[i]), "value {} at index {} is not finite", values[i], i);
  }
  return Status();
}

}  // namespace gcmoe::formats
