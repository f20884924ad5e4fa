#include "bench/common/device_fill.h"
#include "engine/common/cuda_check.h"

namespace gcmoe::bench {
namespace {

constexpr int kThreads = 256;
constexpr int kBlocks = 1024;

__device__ __forceinline__ std::uint64_t mix(std::uint64_t x) {
  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__global__ void fill_e4m3_kernel(std::uint8_t* data, std::int64_t count, std::uint64_t seed) {
  std::int64_t const stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    auto code = static_cast<std::uint8_t>(mix(seed ^ static_cast<std::uint64_t>(i)));
    if ((code & 0x7f) == 0x7f) {
      code ^= 0x01;  // NaN -> 448 or -448
    }
    data[i] = code;
  }
}

__global__ void fill_floats_kernel(float* data, std::int64_t count, float lo, float hi,
                                   std::uint64_t seed) {
  std::int64_t const stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    float const u = static_cast<float>(mix(seed ^ static_cast<std::uint64_t>(i)) >> 40) *
                    (1.0f / static_cast<float>(1 << 24));
    data[i] = lo + (hi - lo) * u;
  }
}

}  // namespace

Status fill_random_e4m3(std::uint8_t* data, std::int64_t count, std::uint64_t seed,
                        cudaStream_t stream) {
  fill_e4m3_kernel<<<kBlocks, kThreads, 0, stream>>>(data, count, seed);
  GCMOE_CHECK_LAUNCH();
  return Status();
}

Status fill_random_floats(float* data, std::int64_t count, float lo, float hi, std::uint64_t seed,
                          cudaStream_t stream) {
  fill_floats_kernel<<<kBlocks, kThreads, 0, stream>>>(data, count, lo, hi, seed);
  GCMOE_CHECK_LAUNCH();
  return Status();
}

}  // namespace gcmoe::bench
