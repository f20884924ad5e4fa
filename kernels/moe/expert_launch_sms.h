#pragma once
// The SM counts the expert GEMM launchers size their grids and shared memory by
// (fp8_expert_wgmma.cu, mxfp4_expert_wgmma.cu).

#include <cuda_runtime.h>

#include <cstddef>
#include <type_traits>

#include "engine/common/cuda_check.h"
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

// The CTAs one SM holds of `kernel` at `threads` per CTA and `smem` dynamic shared bytes.
template <typename Kernel>
StatusOr<int> ctas_per_sm(Kernel kernel, int threads, std::size_t smem) {
  int blocks = 0;
  GCMOE_CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, smem));
  return blocks;
}

// f(stage, width) with both as std::integral_constant (ExpertGemmStage and int) for the stage
// given and the one of kWidths equal to pass_rows, or INVALID_ARGUMENT with `refusal` when none
// is: a runtime (stage, width) to a kernel configuration.
template <int kWidth, int... kRest, typename F>
StatusOr<int> for_stage_and_width(ExpertGemmStage stage, int pass_rows, F const& f,
                                  char const* refusal) {
  if (pass_rows == kWidth) {
    std::integral_constant<int, kWidth> const width;
    return stage == ExpertGemmStage::kGateUp
               ? f(std::integral_constant<ExpertGemmStage, ExpertGemmStage::kGateUp>{}, width)
               : f(std::integral_constant<ExpertGemmStage, ExpertGemmStage::kDown>{}, width);
  }
  if constexpr (sizeof...(kRest) > 0) {
    return for_stage_and_width<kRest...>(stage, pass_rows, f, refusal);
  } else {
    return Status(StatusCode::kInvalidArgument, refusal);
  }
}

}  // namespace gcmoe::kernels
