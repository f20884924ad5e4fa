#pragma once
// axpby on the GPU: y[i] = a * x[i] + b * y[i], fp32, in place on y. The first kernel of the
// project: it proves the build, the launch checks and the GPU-vs-CPU test harness.

#include <cuda_runtime.h>

#include <cstdint>

#include "engine/common/status.h"

namespace gcmoe::kernels {

// `x` and `y` are device pointers of `n` floats. Asynchronous on `stream`.
Status axpby(float a, float const* x, float b, float* y, std::int64_t n, cudaStream_t stream);

}  // namespace gcmoe::kernels
