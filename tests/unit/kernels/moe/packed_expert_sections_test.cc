// Where a packed expert's sections sit (kernels/moe/packed_expert_sections.h), at the release
// shapes: sizes computed here from the layouts' image sizes, aligned, in order, disjoint.
#include "kernels/moe/packed_expert_sections.h"

#include <cstdint>
#include <utility>

#include "tests/support/catch.h"

namespace gcmoe::kernels {
namespace {

std::int64_t aligned(std::int64_t v) {
  return (v + 255) / 256 * 256;
}

// Images per projection and bytes per image (codes, scales), and scale bytes per 64-row tile
// (tiles: L1's, L2's), give the sections.
void check_sections(PackedExpertSections const& s, std::int64_t l1_images, std::int64_t l2_images,
                    std::int64_t code_bytes, std::int64_t scale_bytes,
                    std::pair<std::int64_t, std::int64_t> tiles = {0, 0},
                    std::int64_t tile_bytes = 0) {
  CHECK(s.l1_codes == 0);
  CHECK(s.l1_scales == aligned(l1_images * code_bytes));
  CHECK(s.l2_codes == s.l1_scales + aligned(l1_images * scale_bytes + tiles.first * tile_bytes));
  CHECK(s.l2_scales == s.l2_codes + aligned(l2_images * code_bytes));
  CHECK(s.stride == s.l2_scales + aligned(l2_images * scale_bytes + tiles.second * tile_bytes));
  for (std::int64_t const offset : {s.l1_scales, s.l2_codes, s.l2_scales, s.stride}) {
    CHECK(offset % kPackedSectionAlign == 0);
  }
}

TEST_CASE("Packed FP8 expert sections at GLM-5.2's shape") {
  // H 6144, I 2048: L1 (2048/32)·(6144/128) = 3072 images, L2 (6144/64)·(2048/128) = 1536, each
  // 64×128 e4m3 codes and two f32 scales.
  PackedExpertSections const s = fp8_expert_sections(6144, 2048);
  check_sections(s, 3072, 1536, 8192, 8);
  CHECK(s.stride == 37'785'600);  // 37.79 MB per expert (bench/NOTES.md's floors)
  CHECK(packed_expert_sections(ExpertWeightFormat::kFp8Block128, 6144, 2048) == s);
}

TEST_CASE("Packed MXFP4 expert sections at DeepSeek-V4.1's shape") {
  // H 5120, I 2304: L1 (2304/32)·(5120/128) = 2880 images, L2 (5120/64)·(2304/128) = 1440, each
  // 4096 bytes of e2m1 codes and 64 scale words (one e8m0 byte per 32 weights), and one row image
  // of 64 f32 per 64-row tile (L1 72 tiles, L2 80).
  PackedExpertSections const s = mxfp4_expert_sections(5120, 2304);
  check_sections(s, 2880, 1440, 4096, 64 * 4, {72, 80}, 64 * 4);
  // The checkpoint's 18,800,640 bytes per expert (model-spec) plus 152 row images of 256 bytes
  // (0.21%).
  CHECK(s.stride == 18'800'640 + 152 * 256);
  CHECK(packed_expert_sections(ExpertWeightFormat::kMxfp4, 5120, 2304) == s);
}

TEST_CASE("Packed sections of a small expert round every section up to the alignment") {
  // H 256, I 128: L1 4·2 = 8 FP8 images (64 KiB of codes, 64 bytes of scales: one 256-byte
  // unit), L2 4·1 = 4 images (32 KiB, 32 bytes of scales: one unit).
  PackedExpertSections const s = fp8_expert_sections(256, 128);
  check_sections(s, 8, 4, 8192, 8);
  CHECK(s.l2_codes - s.l1_scales == 256);
  CHECK(s.stride == 65536 + 256 + 32768 + 256);
}

}  // namespace
}  // namespace gcmoe::kernels
