#include "engine/plan/gpu_catalog.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace gcmoe::plan {
namespace {

constexpr std::int64_t kMiB = 1024 * 1024;

}  // namespace

std::vector<GpuSpec> const& known_gpus() {
  // nvidia-smi totals (MiB): H100 SXM 81559, H200 143771, B200 183359.
  static std::vector<GpuSpec> const gpus = {
      {"h100", "NVIDIA H100 SXM (80 GB HBM3)", 81559 * kMiB},
      {"h200", "NVIDIA H200 (141 GB HBM3e)", 143771 * kMiB},
      {"b200", "NVIDIA B200 (180 GB HBM3e)", 183359 * kMiB},
  };
  return gpus;
}

StatusOr<GpuSpec> find_gpu(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::vector<std::string> names;
  for (GpuSpec const& gpu : known_gpus()) {
    if (gpu.name == lower) {
      return gpu;
    }
    names.push_back(gpu.name);
  }
  return not_found_error(fmt::format("unknown GPU '{}' (known: {}; or give --gpu-memory-gib)", name,
                                     fmt::join(names, ", ")));
}

}  // namespace gcmoe::plan
