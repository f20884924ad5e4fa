#include "kernels/moe/packed_expert_sections.h"

#include "kernels/moe/fp8_expert_wgmma_layout.h"
#include "kernels/moe/mxfp4_expert_wgmma_layout.h"

namespace gcmoe::kernels {
namespace {

std::int64_t align_up(std::int64_t v) {
  return (v + kPackedSectionAlign - 1) / kPackedSectionAlign * kPackedSectionAlign;
}

// L1 and L2 images of `image_bytes` codes and `scale_bytes` scales each, and `tile_bytes` more
// scale bytes per 64-row tile (MXFP4's row images).
PackedExpertSections sections_of(std::int64_t hidden, std::int64_t inter, std::int64_t image_bytes,
                                 std::int64_t scale_bytes, std::int64_t tile_bytes) {
  std::int64_t const l1_tiles = inter / 32;
  std::int64_t const l2_tiles = hidden / 64;
  std::int64_t const l1_images = l1_tiles * (hidden / 128);
  std::int64_t const l2_images = l2_tiles * (inter / 128);
  PackedExpertSections s;
  s.l1_codes = 0;
  s.l1_scales = align_up(l1_images * image_bytes);
  s.l2_codes = s.l1_scales + align_up(l1_images * scale_bytes + l1_tiles * tile_bytes);
  s.l2_scales = s.l2_codes + align_up(l2_images * image_bytes);
  s.stride = s.l2_scales + align_up(l2_images * scale_bytes + l2_tiles * tile_bytes);
  return s;
}

}  // namespace

PackedExpertSections fp8_expert_sections(std::int64_t hidden, std::int64_t inter) {
  return sections_of(hidden, inter, kWgmmaChunkBytes,
                     kWgmmaScalesPerTileChunk * static_cast<std::int64_t>(sizeof(float)), 0);
}

PackedExpertSections mxfp4_expert_sections(std::int64_t hidden, std::int64_t inter) {
  return sections_of(hidden, inter, kMxCodeImageBytes, kMxScaleImageWords * 4,
                     kMxScaleImageWords * 4);
}

PackedExpertSections packed_expert_sections(ExpertWeightFormat format, std::int64_t hidden,
                                            std::int64_t inter) {
  switch (format) {
    case ExpertWeightFormat::kFp8Block128:
      return fp8_expert_sections(hidden, inter);
    case ExpertWeightFormat::kMxfp4:
      return mxfp4_expert_sections(hidden, inter);
  }
  return fp8_expert_sections(hidden, inter);
}

}  // namespace gcmoe::kernels
