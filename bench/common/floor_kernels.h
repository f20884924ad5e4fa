#pragma once
// Floors measured in the same run as a benchmark. Memory: an SM copy and an SM read-only stream
// (the pattern of weight streaming), 16-byte vectors — a graph-captured cudaMemcpy runs on the copy
// engines and moves less than the SMs can; their CPU references (memcmp of the copy, the xor of
// the input) are checked by measure_memory_ceilings before it reports a rate. Launch: an empty
// kernel. Clock: the SM clock while one thread spins.

#include <cuda_runtime.h>

#include <cstdint>

#include "engine/common/status.h"

namespace gcmoe::bench {

// dst = src, `bytes` a multiple of 16.
Status launch_sm_copy(void* dst, void const* src, std::int64_t bytes, cudaStream_t stream);

// Xor of every 16-byte vector of src into out[blockIdx] (so the loads cannot be elided); the
// caller xors the `blocks` partials. `bytes` a multiple of 16.
Status launch_sm_read(void const* src, std::int64_t bytes, uint4* out, int blocks,
                      cudaStream_t stream);

inline constexpr int kStreamBlocks = 132 * 8;

Status launch_empty_kernel(cudaStream_t stream);

// The SM clock while one thread spins ~2^20 cycles: clock64 cycles and %globaltimer ns into
// cycles_and_ns[0..1] (whether the card ran at its boost clock during a benchmark of small
// kernels).
Status launch_clock_probe(long long* cycles_and_ns, cudaStream_t stream);

}  // namespace gcmoe::bench
