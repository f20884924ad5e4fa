#pragma once
// Floors measured in the same run as a benchmark. Memory: an SM copy, 16-byte vectors — a
// graph-captured cudaMemcpy runs on the copy engines and moves less than the SMs can; its CPU
// reference (memcmp of the copy) is checked by measure_memory_ceilings before it reports a rate
// (the read-only streams: read_stream_kernels.h). Launch: an empty kernel. Clock: the SM clock
// while one thread spins.

#include <cuda_runtime.h>

#include <cstdint>

#include "engine/common/status.h"

namespace gcmoe::bench {

// dst = src, `bytes` a multiple of 16.
Status launch_sm_copy(void* dst, void const* src, std::int64_t bytes, cudaStream_t stream);

inline constexpr int kStreamBlocks = 132 * 8;

Status launch_empty_kernel(cudaStream_t stream);

// The SM clock while one thread spins ~2^20 cycles: clock64 cycles and %globaltimer ns into
// cycles_and_ns[0..1] (whether the card ran at its boost clock during a benchmark of small
// kernels).
Status launch_clock_probe(long long* cycles_and_ns, cudaStream_t stream);

}  // namespace gcmoe::bench
