#pragma once
// The K split of an expert WGMMA kernel (fp8_expert_wgmma_kernel.cuh): where one expert's tile
// groups are too few CTAs to stream its weights at the HBM rate (the shared expert alone: 18 L1
// CTAs at V4.1's shape, one SM's bulk-copy stream each), a cluster of `splits` CTAs shares each
// (tile group, pass), each CTA streaming a contiguous share of the K chunks; their partial
// accumulators are summed in the cluster's CTA 0, which alone runs the pass's epilogue.
// The sum goes through CTA 0's stage memory, so a split CTA runs exactly one pass (the launcher
// checks that the rows fit the passes side by side).

#include <cstdint>

#include "kernels/hopper/cluster.cuh"

namespace gcmoe::kernels {

// The chunks [begin, end) of split `split` of `splits` (shares differ by at most one chunk).
struct ChunkRange {
  int begin = 0;
  int end = 0;
};
__host__ __device__ inline ChunkRange split_chunks(int chunks, int split, int splits) {
  return {split * chunks / splits, (split + 1) * chunks / splits};
}

// Sums the consumer threads' accumulators of the cluster's CTAs into CTA 0's, in rank order (so
// the result does not depend on which CTA finished first). scratch: the shared address of this
// CTA's stage memory, at least (splits - 1) · kThreads · kCount floats, free once every CTA of
// the cluster has finished its chunk loop. consumer: the thread's index among the kThreads
// consumer threads. Every consumer thread of every CTA of the cluster calls it (feed warps may
// have exited). Returns true in CTA 0, which holds the sum.
template <int kCount, int kThreads>
__device__ __forceinline__ bool sum_split_accumulators(float (&acc)[kCount], std::uint32_t scratch,
                                                       int splits, int consumer) {
  static_assert(kCount % 4 == 0, "accumulators go as 16-byte stores");
  std::uint32_t const rank = hopper::cluster_ctarank();
  constexpr std::uint32_t kThreadBytes = kCount * 4;
  hopper::cluster_sync();  // CTA 0's stages are no longer read
  if (rank != 0) {
    std::uint32_t const slot =
        scratch + ((rank - 1) * kThreads + static_cast<std::uint32_t>(consumer)) * kThreadBytes;
    std::uint32_t const remote = hopper::map_shared_to_rank(slot, 0);
#pragma unroll
    for (int i = 0; i < kCount; i += 4) {
      hopper::store_shared_cluster_16(remote + 4u * static_cast<std::uint32_t>(i), acc[i],
                                      acc[i + 1], acc[i + 2], acc[i + 3]);
    }
  }
  hopper::cluster_sync();  // the partial sums have landed in CTA 0
  if (rank != 0) {
    return false;
  }
  for (int r = 1; r < splits; ++r) {
    std::uint32_t const slot = scratch + ((static_cast<std::uint32_t>(r) - 1) * kThreads +
                                          static_cast<std::uint32_t>(consumer)) *
                                             kThreadBytes;
#pragma unroll
    for (int i = 0; i < kCount; i += 4) {
      float a, b, c, d;
      asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
                   : "=f"(a), "=f"(b), "=f"(c), "=f"(d)
                   : "r"(slot + 4u * static_cast<std::uint32_t>(i)));
      acc[i] += a;
      acc[i + 1] += b;
      acc[i + 2] += c;
      acc[i + 3] += d;
    }
  }
  return true;
}

}  // namespace gcmoe::kernels
