#include "kernels/moe/expert_pass_policy.h"

#include <algorithm>

namespace gcmoe::kernels {

ExpertPasses expert_passes_for(int rows_per_expert_hint, std::span<PassBand const> bands) {
  int const hint = std::max(rows_per_expert_hint, 1);
  PassBand chosen = bands.back();
  for (PassBand const& band : bands) {
    if (hint <= band.max_hint) {
      chosen = band;
      break;
    }
  }
  return {chosen.rows, std::min((hint + chosen.rows - 1) / chosen.rows, kMaxParallelPasses),
          chosen.producer_less};
}

}  // namespace gcmoe::kernels
