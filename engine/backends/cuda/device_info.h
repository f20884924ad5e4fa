#pragma once
// What the engine needs to know about a CUDA device before it plans partitions and tiles.

#include <string>
#include <vector>

#include "engine/common/status.h"

namespace gcmoe::cuda {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  int sm_count = 0;
  std::size_t global_memory_bytes = 0;
  std::size_t l2_bytes = 0;
  std::size_t max_shared_memory_per_block_optin = 0;
  // Green-context SM granularity as the driver reports it (H200: minimum 8, alignment 8).
  int green_ctx_min_sms = 0;
  int green_ctx_sm_alignment = 0;
};

// Number of visible CUDA devices; 0 (not an error) when there is no driver or no device.
int visible_device_count();

StatusOr<DeviceInfo> query_device(int ordinal);

// One line per device, for `gcmoe devices` and logs.
std::string describe(DeviceInfo const& info);

}  // namespace gcmoe::cuda
