#include "engine/model/glm/rope.h"

#include <cmath>

namespace gcmoe::model::glm {

Rope::Rope(std::int64_t const dim, double const theta) : dim_(dim) {
  inv_freq_.resize(static_cast<std::size_t>(dim / 2));
  for (std::int64_t i = 0; i < dim / 2; ++i) {
    float const exponent = static_cast<float>(2 * i) / static_cast<float>(dim);
    inv_freq_[static_cast<std::size_t>(i)] = 1.0f / std::pow(static_cast<float>(theta), exponent);
  }
}

void Rope::apply(float* x, std::int64_t const rows, std::int64_t const stride,
                 std::int32_t const position) const {
  for (std::int64_t i = 0; i < dim_ / 2; ++i) {
    float const angle = static_cast<float>(position) * inv_freq_[static_cast<std::size_t>(i)];
    float const c = std::cos(angle);
    float const s = std::sin(angle);
    for (std::int64_t r = 0; r < rows; ++r) {
      float* pair = x + r * stride + 2 * i;
      float const x0 = pair[0];
      float const x1 = pair[1];
      pair[0] = x0 * c - x1 * s;
      pair[1] = x1 * c + x0 * s;
    }
  }
}

}  // namespace gcmoe::model::glm
