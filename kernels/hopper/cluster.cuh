#pragma once
// Hopper (sm_90a) thread-block-cluster wrappers: the CTA's rank in its cluster, the cluster
// barrier, and stores into another CTA's shared memory (distributed shared memory). PTX ISA:
// "barrier.cluster", "mapa", "Distributed shared memory".

#include <cstdint>

namespace gcmoe::kernels::hopper {

// This CTA's rank in its cluster (0 when launched without clusters).
__device__ __forceinline__ std::uint32_t cluster_ctarank() {
  std::uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}

// Every thread of every CTA of the cluster arrives (release: its earlier writes, shared::cluster
// ones included, are visible to the threads that then wait) and waits for all (acquire). Exited
// threads count as arrived.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
}

// The shared::cluster address of the same shared-memory location in the cluster's CTA `rank`.
__device__ __forceinline__ std::uint32_t map_shared_to_rank(std::uint32_t address,
                                                            std::uint32_t rank) {
  std::uint32_t mapped;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(mapped) : "r"(address), "r"(rank));
  return mapped;
}

// 16 bytes into another CTA's shared memory (address from map_shared_to_rank).
__device__ __forceinline__ void store_shared_cluster_16(std::uint32_t address, float a, float b,
                                                        float c, float d) {
  asm volatile("st.shared::cluster.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(address), "f"(a), "f"(b),
               "f"(c), "f"(d)
               : "memory");
}

}  // namespace gcmoe::kernels::hopper
