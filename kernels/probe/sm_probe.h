#pragma once
// Diagnostic kernel: each block records the SM it ran on (%smid). One block fits per SM (it asks
// for the opt-in maximum of dynamic shared memory), so a grid of >= the partition's SM count
// touches every SM of the partition it runs in. Block 0 can also set a flag, or wait on one with
// a timeout, which proves two partitions ran at the same time without risking a hang.
// Its CPU-side reference is kernels/probe/partition_check.h.

#include <cuda_runtime.h>

#include <cstdint>

#include "engine/common/status.h"

namespace gcmoe::kernels {

struct SmProbeLaunch {
  int* smids = nullptr;  // device, `blocks` ints, written by block index
  int blocks = 0;
  unsigned int* set_flag = nullptr;          // device; block 0 stores 1 after recording (optional)
  unsigned int* wait_flag = nullptr;         // device; block 0 spins until nonzero (optional)
  int* timed_out = nullptr;                  // device; set to 1 when the wait hit its timeout
  std::uint64_t timeout_ns = 2'000'000'000;  // 2 s
};

// Loads the probe kernel and raises its shared-memory limit. Call before any concurrent launch:
// lazy loading while another kernel spins can deadlock (docs/gpu-machine.md).
Status preload_sm_probe();

Status launch_sm_probe(SmProbeLaunch const& launch, cudaStream_t stream);

}  // namespace gcmoe::kernels
