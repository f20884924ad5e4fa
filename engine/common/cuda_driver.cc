#include "engine/common/cuda_driver.h"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <mutex>

namespace gcmoe::cuda {
namespace {

StatusOr<DriverApi> resolve() {
  DriverApi api;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSuccess;
  void* pointer = nullptr;
#define GCMOE_DRIVER_RESOLVE(name)                                                             \
  pointer = nullptr;                                                                           \
  if (cudaGetDriverEntryPointByVersion(#name, &pointer, CUDA_VERSION, cudaEnableDefault,       \
                                       &found) != cudaSuccess ||                               \
      found != cudaDriverEntryPointSuccess || pointer == nullptr) {                            \
    cudaGetLastError();                                                                        \
    return failed_precondition_error(fmt::format(                                              \
        "CUDA driver entry point {} unavailable (no driver, or older than CUDA {}.{})", #name, \
        CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10));                                       \
  }                                                                                            \
  api.name = reinterpret_cast<decltype(api.name)>(pointer);
  GCMOE_DRIVER_FUNCTIONS(GCMOE_DRIVER_RESOLVE)
#undef GCMOE_DRIVER_RESOLVE
  return api;
}

}  // namespace

StatusOr<DriverApi const*> driver_api() {
  static std::once_flag once;
  static StatusOr<DriverApi> resolved = failed_precondition_error("CUDA driver not resolved");
  std::call_once(once, [] { resolved = resolve(); });
  if (!resolved.ok()) {
    return resolved.status();
  }
  return &resolved.value();
}

}  // namespace gcmoe::cuda
