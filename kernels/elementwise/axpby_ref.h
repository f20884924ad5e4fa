#pragma once
// CPU reference of axpby: y[i] = a * x[i] + b * y[i] in fp32.

#include <span>

namespace gcmoe::kernels {

void axpby_ref(float a, std::span<float const> x, float b, std::span<float> y);

}  // namespace gcmoe::kernels
