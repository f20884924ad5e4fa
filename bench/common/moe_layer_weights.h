#pragma once
// Random MoE-layer weights at a real model's shape for the layer benchmarks: the router, and
// E (+ 1 shared) experts packed in the WGMMA layout with plausible f32 scale_inv sections.

#include <cuda_runtime.h>

#include <cstdint>

#include "engine/common/status.h"
#include "kernels/moe/moe_layer_ref.h"
#include "kernels/moe/moe_layer_sequential.h"

namespace gcmoe::bench {

struct ModelShape {
  char const* name;
  kernels::MoeFamily family;
  int hidden, inter, experts, top_k;
  char const* expert_format;
};

inline constexpr ModelShape kGlm52{"glm5.2",
                                   kernels::MoeFamily::kGlm52,
                                   6144,
                                   2048,
                                   256,
                                   8,
                                   "fp8 e4m3, 128x128 f32 scales (the release's format)"};
inline constexpr ModelShape kDeepseekV41{"deepseek-v4.1",
                                         kernels::MoeFamily::kDeepseekV41,
                                         5120,
                                         2304,
                                         384,
                                         6,
                                         "fp8 e4m3, 128x128 f32 scales, standing in for MXFP4"};

// One packed expert's sections (fp8_expert_wgmma_layout.h), 256-byte aligned.
kernels::PackedExpertSections sections(ModelShape const& m);

// Random e4m3 codes with scale sections of plausible f32 scale_inv values.
Status fill_experts(std::uint8_t* base, int experts, kernels::PackedExpertSections const& s,
                    std::uint64_t seed, cudaStream_t stream);

}  // namespace gcmoe::bench
