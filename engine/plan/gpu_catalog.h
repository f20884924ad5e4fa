#pragma once
// GPUs `gcmoe plan --gpu NAME` knows: total device memory as the CUDA driver reports it
// (cudaMemGetInfo total, = nvidia-smi's "MiB" figure), which is what a rank can allocate from.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"

namespace gcmoe::plan {

struct GpuSpec {
  std::string name;         // "h200"
  std::string description;  // "NVIDIA H200 (141 GB HBM3e)"
  std::int64_t memory_bytes = 0;
};

// NOT_FOUND naming the known GPUs for an unknown name (case-insensitive).
StatusOr<GpuSpec> find_gpu(std::string_view name);

std::vector<GpuSpec> const& known_gpus();

}  // namespace gcmoe::plan
