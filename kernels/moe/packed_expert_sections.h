#pragma once
// Where each part of one packed expert sits (PackedExpertSections), per weight format: the L1
// (gate/up) and L2 (down) images the expert GEMMs stream and their scales, each section 256-byte
// aligned, so that expert i of a layer starts at i · stride. What the load-time transforms, the
// tests' fixtures and the benchmarks lay experts out by.

#include <cstdint>

#include "kernels/moe/moe_layer_sequential.h"

namespace gcmoe::kernels {

// FP8 (fp8_expert_wgmma_layout.h): L1 (I/32)·(H/128) chunks of kWgmmaChunkBytes + 8 bytes of
// scales each, L2 (H/64)·(I/128).
PackedExpertSections fp8_expert_sections(std::int64_t hidden, std::int64_t inter);

// MXFP4 (mxfp4_expert_wgmma_layout.h): the same images of kMxCodeImageBytes codes, each with
// kMxScaleImageWords scale words.
PackedExpertSections mxfp4_expert_sections(std::int64_t hidden, std::int64_t inter);

PackedExpertSections packed_expert_sections(ExpertWeightFormat format, std::int64_t hidden,
                                            std::int64_t inter);

}  // namespace gcmoe::kernels
