#include "bench/common/moe_layer_weights.h"

#include "bench/common/device_fill.h"
#include "engine/common/check.h"
#include "kernels/moe/fp8_expert_wgmma_layout.h"

namespace gcmoe::bench {
namespace {

std::int64_t align_up(std::int64_t v) {
  return (v + 255) / 256 * 256;
}

}  // namespace

kernels::PackedExpertSections sections(ModelShape const& m) {
  using kernels::PackedExpertSections;
  PackedExpertSections s;
  std::int64_t const l1_cells = (m.inter / 32) * (m.hidden / 128);
  std::int64_t const l2_cells = (m.hidden / 64) * (m.inter / 128);
  s.l1_scales = align_up(l1_cells * kernels::kWgmmaChunkBytes);
  s.l2_codes = s.l1_scales + align_up(l1_cells * 8);
  s.l2_scales = s.l2_codes + align_up(l2_cells * kernels::kWgmmaChunkBytes);
  s.stride = s.l2_scales + align_up(l2_cells * 8);
  return s;
}

// Random e4m3 codes with scale sections of plausible f32 scale_inv values.
Status fill_experts(std::uint8_t* base, int experts, kernels::PackedExpertSections const& s,
                    std::uint64_t seed, cudaStream_t stream) {
  GCMOE_RETURN_IF_ERROR(fill_random_e4m3(base, experts * s.stride, seed, stream));
  for (int e = 0; e < experts; ++e) {
    std::uint8_t* const expert = base + e * s.stride;
    GCMOE_RETURN_IF_ERROR(fill_random_floats(reinterpret_cast<float*>(expert + s.l1_scales),
                                             (s.l2_codes - s.l1_scales) / 4, 1e-4f, 3e-4f,
                                             seed + 2 * e + 1, stream));
    GCMOE_RETURN_IF_ERROR(fill_random_floats(reinterpret_cast<float*>(expert + s.l2_scales),
                                             (s.stride - s.l2_scales) / 4, 1e-4f, 3e-4f,
                                             seed + 2 * e + 2, stream));
  }
  return Status();
}

}  // namespace gcmoe::bench
