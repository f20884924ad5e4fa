#include "engine/common/cuda_check.h"
#include "kernels/elementwise/axpby.h"

namespace gcmoe::kernels {
namespace {

constexpr int kThreads = 256;

// Grid-stride loop; 16-byte loads when both pointers are 16-byte aligned, scalar tail.
__global__ void axpby_kernel(float a, float const* __restrict__ x, float b, float* __restrict__ y,
                             std::int64_t n, bool vectorized) {
  std::int64_t const stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  std::int64_t const tid = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  std::int64_t tail_start = 0;
  if (vectorized) {
    std::int64_t const n4 = n / 4;
    auto const* x4 = reinterpret_cast<float4 const*>(x);
    auto* y4 = reinterpret_cast<float4*>(y);
    for (std::int64_t i = tid; i < n4; i += stride) {
      float4 const xv = x4[i];
      float4 yv = y4[i];
      yv.x = a * xv.x + b * yv.x;
      yv.y = a * xv.y + b * yv.y;
      yv.z = a * xv.z + b * yv.z;
      yv.w = a * xv.w + b * yv.w;
      y4[i] = yv;
    }
    tail_start = n4 * 4;
  }
  for (std::int64_t i = tail_start + tid; i < n; i += stride) {
    y[i] = a * x[i] + b * y[i];
  }
}

}  // namespace

Status axpby(float a, float const* x, float b, float* y, std::int64_t n, cudaStream_t stream) {
  GCMOE_CHECK_ARG_MSG(n >= 0, "axpby: negative length");
  if (n == 0) {
    return Status();
  }
  GCMOE_CHECK_ARG_MSG(x != nullptr && y != nullptr, "axpby: null pointer");
  bool const vectorized = (reinterpret_cast<std::uintptr_t>(x) % 16 == 0) &&
                          (reinterpret_cast<std::uintptr_t>(y) % 16 == 0);
  std::int64_t const work = vectorized ? (n + 3) / 4 : n;
  std::int64_t blocks = (work + kThreads - 1) / kThreads;
  blocks = blocks > 65535 ? 65535 : blocks;
  axpby_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(a, x, b, y, n, vectorized);
  GCMOE_CHECK_LAUNCH();
  return Status();
}

}  // namespace gcmoe::kernels
