#pragma once
// Where each part of one packed expert sits (PackedExpertSections), per weight format: the L1
// (gate/up) and L2 (down) images the expert GEMMs stream and their scales, each section 256-byte
// aligned, so that expert i of a layer starts at i · stride. What the load-time transform
// (model::glm_fp8_packed_layout), the tests' fixtures and the benchmarks lay experts out by. CPU
// only (gcmoe_kernels_ref).

#include <cstdint>

namespace gcmoe::kernels {

// Section starts are aligned for 16-byte vector loads and whole 256-byte transactions.
inline constexpr std::int64_t kPackedSectionAlign = 256;

// Where one packed expert's sections sit (bytes from the expert's start; the expert's stride).
struct PackedExpertSections {
  std::int64_t l1_codes = 0;
  std::int64_t l1_scales = 0;  // f32; 4-byte aligned
  std::int64_t l2_codes = 0;
  std::int64_t l2_scales = 0;
  std::int64_t stride = 0;  // bytes from one expert to the next; a multiple of 16

  bool operator==(PackedExpertSections const&) const = default;
};

// How a layer's routed experts are packed: FP8 e4m3 with 128×128 scales (GLM-5.2;
// fp8_expert_wgmma_layout.h) or MXFP4 (DeepSeek V4/V4.1; mxfp4_expert_wgmma_layout.h: the sections'
// scales are the packed scale words).
enum class ExpertWeightFormat { kFp8Block128, kMxfp4 };

// FP8 (fp8_expert_wgmma_layout.h): L1 (I/32)·(H/128) chunks of kWgmmaChunkBytes + 8 bytes of
// scales each, L2 (H/64)·(I/128).
PackedExpertSections fp8_expert_sections(std::int64_t hidden, std::int64_t inter);

// MXFP4 (mxfp4_expert_wgmma_layout.h): the same images of kMxCodeImageBytes codes, each with
// kMxScaleImageWords scale words, and after a projection's scale images one row image of
// kMxScaleImageWords words per 64-row tile (PackedMxfp4Expert::scales as a whole).
PackedExpertSections mxfp4_expert_sections(std::int64_t hidden, std::int64_t inter);

PackedExpertSections packed_expert_sections(ExpertWeightFormat format, std::int64_t hidden,
                                            std::int64_t inter);

}  // namespace gcmoe::kernels
