#include "kernels/moe/packed_expert_sections.h"

#include "kernels/moe/fp8_expert_wgmma_layout.h"
#include "kernels/moe/mxfp4_expert_wgmma_layout.h"

namespace gcmoe::kernels {
namespace {

std::int64_t align_up(std::int64_t v) {
  return (v + kPackedSectionAlign - 1) / kPackedSectionAlign * kPackedSectionAlign;
}

// L1 and L2 images of `image_bytes` codes and `scale_bytes` scales each.
PackedExpertSections sections_of(std::int64_t hidden, std::int64_t inter, std::int64_t image_bytes,
                                 std::int64_t scale_bytes) {
  std::int64_t const l1_images = (inter / 32) * (hidden / 128);
  std::int64_t const l2_images = (hidden / 64) * (inter / 128);
  PackedExpertSections s;
  s.l1_codes = 0;
  s.l1_scales = align_up(l1_images * image_bytes);
  s.l2_codes = s.l1_scales + align_up(l1_images * scale_bytes);
  s.l2_scales = s.l2_codes + align_up(l2_images * image_bytes);
  s.stride = s.l2_scales + align_up(l2_images * scale_bytes);
  return s;
}

}  // namespace

PackedExpertSections fp8_expert_sections(std::int64_t hidden, std::int64_t inter) {
  return sections_of(hidden, inter, kWgmmaChunkBytes,
                     kWgmmaScalesPerTileChunk * static_cast<std::int64_t>(sizeof(float)));
}

PackedExpertSections mxfp4_expert_sections(std::int64_t hidden, std::int64_t inter) {
  return sections_of(hidden, inter, kMxCodeImageBytes, kMxScaleImageWords * 4);
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
