#pragma once
// GLM-5.2-FP8 routed experts in the WGMMA expert GEMM's layout
// (kernels/moe/fp8_expert_wgmma_layout.h): gate/up interleaved into 64-row L1 tiles and down into
// 64-row L2 tiles, each (tile, 128-K chunk) as WGMMA's 128-byte-swizzled shared-memory image with
// its two f32 scales. One expert's packed bytes:
//   [L1 codes][L1 scales][L2 codes][L2 scales], each section 256-byte aligned
// (kernels/moe/packed_expert_sections.h, the one definition the kernels, tests and benchmarks use).

#include <cstdint>

#include "engine/model/expert_layout_transform.h"

namespace gcmoe::model {

struct GlmFp8PackedLayout {
  std::int64_t l1_tiles = 0;   // intermediate / 32
  std::int64_t l1_chunks = 0;  // hidden / 128
  std::int64_t l2_tiles = 0;   // hidden / 64
  std::int64_t l2_chunks = 0;  // intermediate / 128
  // Byte offsets inside the packed expert, and its total size.
  std::int64_t l1_codes = 0;
  std::int64_t l1_scales = 0;
  std::int64_t l2_codes = 0;
  std::int64_t l2_scales = 0;
  std::int64_t total = 0;
};

// INVALID_ARGUMENT unless the expert is FP8 e4m3 with f32 128×128 scales, intermediate % 128 == 0
// and hidden % 128 == 0.
StatusOr<GlmFp8PackedLayout> glm_fp8_packed_layout(SwigluSpec const& expert);

class GlmFp8ExpertTransform final : public ExpertLayoutTransform {
 public:
  std::string_view name() const override { return "glm_fp8_wgmma"; }
  StatusOr<std::int64_t> packed_bytes(SwigluSpec const& expert) const override;
  Status pack(SwigluSpec const& spec, ExpertTensorViews const& expert,
              std::span<std::byte> out) const override;
};

}  // namespace gcmoe::model
