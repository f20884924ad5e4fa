#include "bench/common/moe_layer_weights.h"

#include <cmath>
#include <cstring>

#include "bench/common/device_fill.h"
#include "engine/common/check.h"
#include "engine/common/cuda_check.h"
#include "kernels/moe/mxfp4_expert_wgmma_layout.h"
#include "kernels/moe/packed_expert_sections.h"

namespace gcmoe::bench {

kernels::PackedExpertSections sections(ModelShape const& m) {
  return kernels::packed_expert_sections(m.format, m.hidden, m.inter);
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

std::vector<std::uint32_t> mxfp4_scale_images(std::int64_t tiles, std::int64_t chunks,
                                              std::mt19937_64& rng) {
  // Checkpoint-like: a row's first block at the row's largest byte, the others up to 3 below
  // (every tile windowed; mxfp4_expert_wgmma_layout.h).
  constexpr int kMaxByte = 120;
  std::vector<std::uint32_t> words(
      static_cast<std::size_t>(kernels::mxfp4_wgmma_scale_words(tiles, chunks)), 0);
  std::uniform_int_distribution<int> spread(0, 3);
  for (std::int64_t i = 0; i < tiles * chunks; ++i) {
    std::uint32_t* const image = words.data() + i * kernels::kMxScaleImageWords;
    for (int r = 0; r < kernels::kMxScaleImageWords; ++r) {
      std::uint8_t steps[4];
      for (int s = 0; s < 4; ++s) {
        steps[s] = static_cast<std::uint8_t>(s == 0 ? 0 : spread(rng));
      }
      image[r] = kernels::mxfp4_wgmma_window_word_of(steps);
    }
  }
  float const row_factor = std::ldexp(1.0f, kMaxByte - 133);
  for (std::int64_t tile = 0; tile < tiles; ++tile) {
    std::uint32_t* const rows = words.data() + kernels::mxfp4_wgmma_row_image(tiles, chunks, tile);
    for (int r = 0; r < kernels::kMxTileRows; ++r) {
      std::memcpy(&rows[r], &row_factor, sizeof(row_factor));
    }
  }
  return words;
}

Status fill_mxfp4_experts(std::uint8_t* base, int experts, kernels::PackedExpertSections const& s,
                          int hidden, int inter, std::uint64_t seed, cudaStream_t stream) {
  GCMOE_RETURN_IF_ERROR(fill_random_e4m3(base, experts * s.stride, seed, stream));
  GCMOE_CHECK_CUDA(cudaStreamSynchronize(stream));
  std::mt19937_64 rng(seed + 1);
  std::vector<std::uint32_t> const l1 = mxfp4_scale_images(inter / 32, hidden / 128, rng);
  std::vector<std::uint32_t> const l2 = mxfp4_scale_images(hidden / 64, inter / 128, rng);
  for (int e = 0; e < experts; ++e) {
    std::uint8_t* const expert = base + e * s.stride;
    GCMOE_CHECK_CUDA(
        cudaMemcpy(expert + s.l1_scales, l1.data(), l1.size() * 4, cudaMemcpyHostToDevice));
    GCMOE_CHECK_CUDA(
        cudaMemcpy(expert + s.l2_scales, l2.data(), l2.size() * 4, cudaMemcpyHostToDevice));
  }
  return Status();
}

}  // namespace gcmoe::bench
