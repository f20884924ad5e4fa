#pragma once
// The CUDA driver API without linking libcuda: entry points are resolved at run time through the
// (static) runtime, so every binary starts on a machine with no driver (CI, the CPU backend) and
// reports "no CUDA device" instead of failing to load. Add a function to the list to use it.

#include <cuda.h>

#include "engine/common/status.h"

// X-macro list of the driver functions the engine calls.
#define GCMOE_DRIVER_FUNCTIONS(X) \
  X(cuGetErrorName)               \
  X(cuGetErrorString)             \
  X(cuDeviceGet)                  \
  X(cuDeviceGetDevResource)       \
  X(cuDevSmResourceSplitByCount)  \
  X(cuDevResourceGenerateDesc)    \
  X(cuGreenCtxCreate)             \
  X(cuGreenCtxDestroy)            \
  X(cuCtxFromGreenCtx)            \
  X(cuGreenCtxStreamCreate)       \
  X(cuGreenCtxGetDevResource)     \
  X(cuStreamDestroy)              \
  X(cuStreamSynchronize)          \
  X(cuTensorMapEncodeTiled)

namespace gcmoe::cuda {

struct DriverApi {
#define GCMOE_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
  GCMOE_DRIVER_FUNCTIONS(GCMOE_DRIVER_MEMBER)
#undef GCMOE_DRIVER_MEMBER
};

// Resolved once, on first use. FAILED_PRECONDITION when there is no driver or it lacks a function.
StatusOr<DriverApi const*> driver_api();

}  // namespace gcmoe::cuda
