#pragma once
// Random MoE-layer weights at a real model's shape for the layer benchmarks: the router, and
// E (+ 1 shared) experts packed in the WGMMA layouts — FP8 with plausible f32 scale_inv sections,
// or MXFP4 with checkpoint-like scale images (routed experts of DeepSeek V4.1, whose shared expert
// stays FP8).

#include <cuda_runtime.h>

#include <cstdint>
#include <random>
#include <vector>

#include "engine/common/status.h"
#include "kernels/moe/moe_layer_ref.h"
#include "kernels/moe/moe_layer_sequential.h"

namespace gcmoe::bench {

struct ModelShape {
  char const* name;
  kernels::MoeFamily family;
  int hidden, inter, experts, top_k;
  kernels::ExpertWeightFormat format;  // of the routed experts; the shared expert is FP8
  char const* expert_format;
};

inline constexpr ModelShape kGlm52{"glm5.2",
                                   kernels::MoeFamily::kGlm52,
                                   6144,
                                   2048,
                                   256,
                                   8,
                                   kernels::ExpertWeightFormat::kFp8Block128,
                                   "fp8 e4m3, 128x128 f32 scales (the release's format)"};
inline constexpr ModelShape kDeepseekV41{"deepseek-v4.1",
                                         kernels::MoeFamily::kDeepseekV41,
                                         5120,
                                         2304,
                                         384,
                                         6,
                                         kernels::ExpertWeightFormat::kMxfp4,
                                         "routed mxfp4 (e2m1, e8m0 per 32), shared fp8 e4m3 with "
                                         "128x128 f32 scales (the release's formats)"};

// One packed routed expert's sections in the shape's format (packed_expert_sections.h).
kernels::PackedExpertSections sections(ModelShape const& m);

// Random e4m3 codes with scale sections of plausible f32 scale_inv values.
Status fill_experts(std::uint8_t* base, int experts, kernels::PackedExpertSections const& s,
                    std::uint64_t seed, cudaStream_t stream);

// The scale words of one MXFP4 projection of `tiles` 64-row tiles and `chunks` chunks
// (mxfp4_expert_wgmma_layout.h: images, then row images): every tile windowed, every row's four
// e8m0 bytes per chunk at most 120 and within 3 exponents of each other (as a quantized std-0.02
// weight gives).
std::vector<std::uint32_t> mxfp4_scale_images(std::int64_t tiles, std::int64_t chunks,
                                              std::mt19937_64& rng);

// Random e2m1 codes (any byte is a valid pair) with those scale images, the same for every
// expert. Returns after the data is in place.
Status fill_mxfp4_experts(std::uint8_t* base, int experts, kernels::PackedExpertSections const& s,
                          int hidden, int inter, std::uint64_t seed, cudaStream_t stream);

}  // namespace gcmoe::bench
