#include <cstring>

#include "bench/common/read_stream_kernels.h"
#include "engine/common/cuda_check.h"
#include "kernels/hopper/ptx.cuh"

namespace gcmoe::bench {
namespace {

namespace hopper = kernels::hopper;

constexpr int kBulkThreads = 256;
constexpr int kMaxStages = 6;

__device__ __forceinline__ void xor_into(uint4& acc, uint4 const v) {
  acc.x ^= v.x;
  acc.y ^= v.y;
  acc.z ^= v.z;
  acc.w ^= v.w;
}

// The block's xor into out[blockIdx.x]; `scratch` holds one uint4 per warp.
__device__ void reduce_block(uint4 acc, uint4* scratch, uint4* out) {
  for (int offset = 16; offset > 0; offset /= 2) {
    acc.x ^= __shfl_xor_sync(0xffffffffu, acc.x, offset);
    acc.y ^= __shfl_xor_sync(0xffffffffu, acc.y, offset);
    acc.z ^= __shfl_xor_sync(0xffffffffu, acc.z, offset);
    acc.w ^= __shfl_xor_sync(0xffffffffu, acc.w, offset);
  }
  if (threadIdx.x % 32 == 0) {
    scratch[threadIdx.x / 32] = acc;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    uint4 total = make_uint4(0, 0, 0, 0);
    for (int w = 0; w < static_cast<int>(blockDim.x) / 32; ++w) {
      xor_into(total, scratch[w]);
    }
    out[blockIdx.x] = total;
  }
}

template <int kUnroll, bool kStreaming>
__global__ void load_stream_kernel(uint4 const* __restrict__ src, std::int64_t count,
                                   uint4* __restrict__ out) {
  __shared__ uint4 scratch[32];
  std::int64_t const stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  uint4 acc = make_uint4(0, 0, 0, 0);
  std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < count; i += kUnroll * stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      v[u] = kStreaming ? __ldcs(src + i + u * stride) : __ldg(src + i + u * stride);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      xor_into(acc, v[u]);
    }
  }
  for (; i < count; i += stride) {
    xor_into(acc, src[i]);
  }
  reduce_block(acc, scratch, out);
}

// Thread 0 keeps `stages` bulk copies in flight; every thread xors its share of each chunk as it
// lands, then the block syncs before the slot is refilled.
__global__ void __launch_bounds__(kBulkThreads)
    bulk_stream_kernel(std::uint8_t const* __restrict__ src, std::int64_t chunks, int stages,
                       uint4* __restrict__ out) {
  extern __shared__ __align__(128) std::uint8_t ring[];
  __shared__ __align__(8) std::uint64_t full[kMaxStages];
  __shared__ uint4 scratch[kBulkThreads / 32];
  std::int64_t const first = blockIdx.x;
  std::int64_t const step = gridDim.x;
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      hopper::mbarrier_init(hopper::smem_address(&full[s]), 1);
    }
    hopper::fence_barrier_init();
  }
  __syncthreads();
  auto const issue = [&](std::int64_t chunk, int slot) {
    std::uint32_t const bar = hopper::smem_address(&full[slot]);
    hopper::mbarrier_arrive_expect_tx(bar, kBulkChunkBytes);
    hopper::bulk_copy_g2s(hopper::smem_address(ring + slot * kBulkChunkBytes),
                          src + chunk * kBulkChunkBytes, kBulkChunkBytes, bar);
  };
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages && first + s * step < chunks; ++s) {
      issue(first + s * step, s);
    }
  }
  uint4 acc = make_uint4(0, 0, 0, 0);
  int slot = 0;
  std::uint32_t phase = 0;
  for (std::int64_t c = first; c < chunks; c += step) {
    hopper::mbarrier_wait(hopper::smem_address(&full[slot]), phase);
    uint4 const* const v = reinterpret_cast<uint4 const*>(ring + slot * kBulkChunkBytes);
    for (int k = static_cast<int>(threadIdx.x); k < kBulkChunkBytes / 16; k += kBulkThreads) {
      xor_into(acc, v[k]);
    }
    __syncthreads();  // the slot is read: refill it
    std::int64_t const next = c + static_cast<std::int64_t>(stages) * step;
    if (threadIdx.x == 0 && next < chunks) {
      issue(next, slot);
    }
    slot = slot + 1 == stages ? 0 : slot + 1;
    phase ^= slot == 0 ? 1u : 0u;
  }
  reduce_block(acc, scratch, out);
}

template <int kUnroll>
cudaError_t launch_unrolled(uint4 const* src, std::int64_t count, uint4* out,
                            LoadStreamShape const& shape, cudaStream_t stream) {
  if (shape.streaming) {
    load_stream_kernel<kUnroll, true><<<shape.blocks, shape.threads, 0, stream>>>(src, count, out);
  } else {
    load_stream_kernel<kUnroll, false><<<shape.blocks, shape.threads, 0, stream>>>(src, count, out);
  }
  return cudaGetLastError();
}

}  // namespace

Status launch_load_stream(void const* src, std::int64_t bytes, uint4* out,
                          LoadStreamShape const& shape, cudaStream_t stream) {
  GCMOE_CHECK_ARG_MSG(bytes % 16 == 0, "load stream: bytes must be a multiple of 16");
  GCMOE_CHECK_ARG_MSG(
      shape.blocks >= 1 && shape.threads >= 32 && shape.threads <= 1024 && shape.threads % 32 == 0,
      "load stream: blocks ≥ 1 and threads a multiple of 32 up to 1024");
  GCMOE_CHECK_ARG_MSG(shape.unroll == 4 || shape.unroll == 8, "load stream: unroll 4 or 8");
  auto const* const v = static_cast<uint4 const*>(src);
  GCMOE_CHECK_CUDA(shape.unroll == 4 ? launch_unrolled<4>(v, bytes / 16, out, shape, stream)
                                     : launch_unrolled<8>(v, bytes / 16, out, shape, stream));
  return Status();
}

Status launch_bulk_stream(void const* src, std::int64_t bytes, uint4* out, int blocks, int stages,
                          cudaStream_t stream) {
  GCMOE_CHECK_ARG_MSG(bytes % kBulkChunkBytes == 0,
                      "bulk stream: bytes must be a multiple of the chunk");
  GCMOE_CHECK_ARG_MSG(blocks >= 1 && stages >= 1 && stages <= kMaxStages,
                      "bulk stream: blocks ≥ 1 and 1 to 6 stages");
  int const smem = stages * kBulkChunkBytes;
  GCMOE_CHECK_CUDA(
      cudaFuncSetAttribute(bulk_stream_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  bulk_stream_kernel<<<blocks, kBulkThreads, smem, stream>>>(static_cast<std::uint8_t const*>(src),
                                                             bytes / kBulkChunkBytes, stages, out);
  GCMOE_CHECK_LAUNCH();
  return Status();
}

std::array<std::uint32_t, 4> host_xor16(std::vector<std::uint8_t> const& bytes) {
  std::array<std::uint32_t, 4> x = {0, 0, 0, 0};
  for (std::size_t i = 0; i + 16 <= bytes.size(); i += 16) {
    for (int w = 0; w < 4; ++w) {
      std::uint32_t word = 0;
      std::memcpy(&word, bytes.data() + i + 4 * w, 4);
      x[static_cast<std::size_t>(w)] ^= word;
    }
  }
  return x;
}

StatusOr<std::array<std::uint32_t, 4>> xor_of_partials(uint4 const* partials, int count) {
  std::vector<uint4> host(static_cast<std::size_t>(count));
  GCMOE_CHECK_CUDA(
      cudaMemcpy(host.data(), partials, host.size() * sizeof(uint4), cudaMemcpyDeviceToHost));
  std::array<std::uint32_t, 4> x = {0, 0, 0, 0};
  for (uint4 const& p : host) {
    x[0] ^= p.x;
    x[1] ^= p.y;
    x[2] ^= p.z;
    x[3] ^= p.w;
  }
  return x;
}

}  // namespace gcmoe::bench
