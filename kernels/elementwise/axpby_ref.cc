#include "kernels/elementwise/axpby_ref.h"

#include <cstddef>

namespace gcmoe::kernels {

void axpby_ref(float a, std::span<float const> x, float b, std::span<float> y) {
  for (std::size_t i = 0; i < y.size(); ++i) {
    y[i] = a * x[i] + b * y[i];
  }
}

}  // namespace gcmoe::kernels
