#include "engine/common/cuda_check.h"

#include <fmt/format.h>

#include "engine/common/cuda_driver.h"

namespace gcmoe {

Status cuda_runtime_status(cudaError_t error, char const* call, char const* file, int line) {
  return internal_error(fmt::format("CUDA error {} ({}) in {} [{}:{}]", cudaGetErrorName(error),
                                    cudaGetErrorString(error), call, file, line));
}

Status cuda_driver_status(CUresult error, char const* call, char const* file, int line) {
  char const* name = "CUDA_ERROR_UNKNOWN";
  char const* text = "unknown driver error";
  if (auto api = cuda::driver_api(); api.ok()) {
    if ((*api)->cuGetErrorName(error, &name) != CUDA_SUCCESS) {
      name = "CUDA_ERROR_UNKNOWN";
    }
    if ((*api)->cuGetErrorString(error, &text) != CUDA_SUCCESS) {
      text = "unknown driver error";
    }
  }
  return internal_error(fmt::format("CUDA driver error {} = {} ({}) in {} [{}:{}]", name,
                                    static_cast<int>(error), text, call, file, line));
}

}  // namespace gcmoe
