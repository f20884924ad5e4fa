#pragma once
// CUDA members of the check-macro family: runtime (cudaError_t) and driver (CUresult) calls.
// A failed call becomes an INTERNAL Status naming the call, the CUDA error and file:line.

#include <cuda.h>
#include <cuda_runtime.h>

#include "engine/common/check.h"

namespace gcmoe {
Status cuda_runtime_status(cudaError_t error, char const* call, char const* file, int line);
Status cuda_driver_status(CUresult error, char const* call, char const* file, int line);
}  // namespace gcmoe

#define GCMOE_CHECK_CUDA(expr)                                                           \
  do {                                                                                   \
    cudaError_t gcmoe_cuda_error_ = (expr);                                              \
    if (gcmoe_cuda_error_ != cudaSuccess) {                                              \
      return ::gcmoe::cuda_runtime_status(gcmoe_cuda_error_, #expr, __FILE__, __LINE__); \
    }                                                                                    \
  } while (false)

#define GCMOE_CHECK_CU(expr)                                                          \
  do {                                                                                \
    CUresult gcmoe_cu_error_ = (expr);                                                \
    if (gcmoe_cu_error_ != CUDA_SUCCESS) {                                            \
      return ::gcmoe::cuda_driver_status(gcmoe_cu_error_, #expr, __FILE__, __LINE__); \
    }                                                                                 \
  } while (false)

// After a kernel launch: the launch error, if any (does not synchronize).
#define GCMOE_CHECK_LAUNCH() GCMOE_CHECK_CUDA(cudaGetLastError())
