#include "bench/common/floor_kernels.h"
#include "engine/common/cuda_check.h"

namespace gcmoe::bench {
namespace {

constexpr int kThreads = 512;
constexpr int kUnroll = 4;

__global__ void empty_kernel() {}

__global__ void clock_probe_kernel(long long* cycles_and_ns) {
  unsigned long long t0 = 0;
  unsigned long long t1 = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  long long const c0 = clock64();
  long long c = c0;
  while (c - c0 < (1LL << 20)) {
    c = clock64();
  }
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  cycles_and_ns[0] = c - c0;
  cycles_and_ns[1] = static_cast<long long>(t1 - t0);
}

__global__ void copy_kernel(uint4* __restrict__ dst, uint4 const* __restrict__ src,
                            std::int64_t count) {
  std::int64_t const stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < count; i += kUnroll * stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      v[u] = __ldcs(src + i + u * stride);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      __stcs(dst + i + u * stride, v[u]);
    }
  }
  for (; i < count; i += stride) {
    dst[i] = src[i];
  }
}

}  // namespace

Status launch_empty_kernel(cudaStream_t stream) {
  empty_kernel<<<1, 32, 0, stream>>>();
  GCMOE_CHECK_LAUNCH();
  return Status();
}

Status launch_clock_probe(long long* cycles_and_ns, cudaStream_t stream) {
  clock_probe_kernel<<<1, 1, 0, stream>>>(cycles_and_ns);
  GCMOE_CHECK_LAUNCH();
  return Status();
}

Status launch_sm_copy(void* dst, void const* src, std::int64_t bytes, cudaStream_t stream) {
  GCMOE_CHECK_ARG_MSG(bytes % 16 == 0, "sm copy: bytes must be a multiple of 16");
  copy_kernel<<<kStreamBlocks, kThreads, 0, stream>>>(static_cast<uint4*>(dst),
                                                      static_cast<uint4 const*>(src), bytes / 16);
  GCMOE_CHECK_LAUNCH();
  return Status();
}

}  // namespace gcmoe::bench
