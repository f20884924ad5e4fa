#pragma once
// The SM counts the expert GEMM launchers size their grids and shared memory by
// (fp8_expert_wgmma.cu, mxfp4_expert_wgmma.cu).

#include <cuda_runtime.h>

#include "kernels/moe/fp8_expert_gemm.h"

namespace gcmoe::kernels {

// The current device's SMs; 0 where the runtime cannot say.
inline int device_sm_count() {
  int device = 0;
  int sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    return 0;
  }
  return sms;
}

// The SMs a PDL launch spreads its grid over (Fp8ExpertGemmArgs::spread_sms): as given, the
// device's for 0, none (0: no spread) for < 0.
inline int spread_sms_of(Fp8ExpertGemmArgs const& args) {
  if (args.spread_sms < 0) {
    return 0;
  }
  return args.spread_sms > 0 ? args.spread_sms : device_sm_count();
}

}  // namespace gcmoe::kernels
