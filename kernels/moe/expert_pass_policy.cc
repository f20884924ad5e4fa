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
  return {band.rows, std::min((hint + band.rows - 1) / band.rows, cap), band.producer_less};
}

int lone_expert_k_splits(int ctas, int chunks, int sms, int max_splits) {
  int splits = 1;
  while (splits < max_splits && ctas * splits < sms &&
         chunks / (splits + 1) >= kMinChunksPerSplit) {
    ++splits;
  }
  return splits;
}

}  // namespace gcmoe::kernels
