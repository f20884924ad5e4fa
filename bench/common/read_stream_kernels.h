#pragma once
// Read-only streams over a buffer in the shapes a weight-streaming kernel can take, to find the
// memory ceiling a bandwidth-bound kernel is compared with (bench_memory_ceiling, and the best of
// them in measure_memory_ceilings): 16-byte loads with a grid-stride loop at a given grid, block
// and unroll, with or without the streaming cache hint; and bulk copies (the TMA engine without a
// tensor map, as the expert GEMMs stream their weights) into a shared-memory ring per CTA.
// Every stream xors each 16-byte vector it read into out[blockIdx] (so no load can be elided); the
// caller checks the xor of the partials against the CPU's.

#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <vector>

#include "engine/common/status.h"

namespace gcmoe::bench {

struct LoadStreamShape {
  int blocks = 132 * 8;
  int threads = 512;      // per block, a multiple of 32, at most 1024
  int unroll = 4;         // loads in flight per thread: 4 or 8
  bool streaming = true;  // ld.global.cs (evict-first) rather than ld.global.nc
};

// `bytes` a multiple of 16, src 16-byte aligned; out: shape.blocks partials.
Status launch_load_stream(void const* src, std::int64_t bytes, uint4* out,
                          LoadStreamShape const& shape, cudaStream_t stream);

// Bulk copies of kBulkChunkBytes into a ring of `stages` chunks per CTA (1 ≤ stages ≤ 6), chunk
// c read by CTA c % blocks; `bytes` a multiple of kBulkChunkBytes, src 16-byte aligned; out:
// `blocks` partials. The ring takes stages × 32 KB of shared memory per CTA
// (measure_memory_ceilings runs 3 stages at two CTAs per SM).
inline constexpr int kBulkChunkBytes = 32 * 1024;
Status launch_bulk_stream(void const* src, std::int64_t bytes, uint4* out, int blocks, int stages,
                          cudaStream_t stream);

// The xor of every 16-byte vector of `bytes` (a multiple of 16): what a stream's partials must
// combine to.
std::array<std::uint32_t, 4> host_xor16(std::vector<std::uint8_t> const& bytes);

// The xor of `count` device partials (a stream's out), copied back synchronously.
StatusOr<std::array<std::uint32_t, 4>> xor_of_partials(uint4 const* partials, int count);

}  // namespace gcmoe::bench
