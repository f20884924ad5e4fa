#include "kernels/moe/expert_pass_policy.h"

#include <algorithm>

namespace gcmoe::kernels {

PassBand const& pass_band_for(int rows_per_expert_hint, std::span<PassBand const> bands) {
  int const hint = std::max(rows_per_expert_hint, 1);
  for (PassBand const& band : bands) {
    if (hint <= band.max_hint) {
      return band;
    }
  }
  return bands.back();
}

ExpertPasses expert_passes_for(int rows_per_expert_hint, std::span<PassBand const> bands) {
  int const hint = std::max(rows_per_expert_hint, 1);
  PassBand const& band = pass_band_for(hint, bands);
  int const cap = std::clamp(band.max_passes, 1, kMaxParallelPasses);
  return {band.rows, std::min((hint + band.rows - 1) / band.rows, cap)};
}

int lone_expert_k_splits(int ctas, int chunks, int sms, int max_splits) {
  int splits = 1;
  while (splits < max_splits && ctas * splits < sms &&
         chunks / (splits + 1) >= kMinChunksPerSplit) {
    ++splits;
  }
  return splits;
}

std::size_t pdl_spread_smem_bytes(std::size_t smem, int ctas, int min_blocks, int sms) {
  if (sms < 1 || ctas < 1) {
    return smem;
  }
  int const per_sm = (ctas + sms - 1) / sms;
  if (per_sm >= min_blocks) {
    return smem;
  }
  // One byte past the share of per_sm + 1 CTAs: that many, with their reserved 1 KB, overflow
  // the SM.
  std::size_t const spread =
      kSmSharedBytes / static_cast<std::size_t>(per_sm + 1) - kCtaReservedSharedBytes + 1;
  return std::min(std::max(smem, spread), kMaxExpertGemmDynamicSmem);
}

}  // namespace gcmoe::kernels
