#include "engine/backends/cuda/device_info.h"

#include <fmt/format.h>

#include "engine/common/cuda_check.h"
#include "engine/common/cuda_driver.h"

namespace gcmoe::cuda {

int visible_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // Clear the sticky "no device"/"no driver" error.
    return 0;
  }
  return count;
}

StatusOr<DeviceInfo> query_device(int ordinal) {
  int const count = visible_device_count();
  GCMOE_CHECK_ARG(ordinal >= 0 && ordinal < count, "CUDA device {} requested but {} visible",
                  ordinal, count);
  cudaDeviceProp prop{};
  GCMOE_CHECK_CUDA(cudaGetDeviceProperties(&prop, ordinal));
  DeviceInfo info;
  info.ordinal = ordinal;
  info.name = prop.name;
  info.compute_major = prop.major;
  info.compute_minor = prop.minor;
  info.sm_count = prop.multiProcessorCount;
  info.global_memory_bytes = prop.totalGlobalMem;
  info.l2_bytes = static_cast<std::size_t>(prop.l2CacheSize);
  info.max_shared_memory_per_block_optin = prop.sharedMemPerBlockOptin;

  // The runtime call above initialised the primary context; the driver API is usable now.
  GCMOE_ASSIGN_OR_RETURN(DriverApi const* cu, driver_api());
  CUdevice device = 0;
  GCMOE_CHECK_CU(cu->cuDeviceGet(&device, ordinal));
  CUdevResource sm_resource{};
  GCMOE_CHECK_CU(cu->cuDeviceGetDevResource(device, &sm_resource, CU_DEV_RESOURCE_TYPE_SM));
  info.green_ctx_min_sms = static_cast<int>(sm_resource.sm.minSmPartitionSize);
  info.green_ctx_sm_alignment = static_cast<int>(sm_resource.sm.smCoscheduledAlignment);
  return info;
}

std::string describe(DeviceInfo const& info) {
  return fmt::format(
      "cuda:{} {} sm_{}{} {} SMs, {:.1f} GiB, L2 {:.0f} MiB, smem/block {} KiB, "
      "green-ctx min {} SMs align {}",
      info.ordinal, info.name, info.compute_major, info.compute_minor, info.sm_count,
      static_cast<double>(info.global_memory_bytes) / (1ull << 30),
      static_cast<double>(info.l2_bytes) / (1ull << 20),
      info.max_shared_memory_per_block_optin / 1024, info.green_ctx_min_sms,
      info.green_ctx_sm_alignment);
}

}  // namespace gcmoe::cuda
