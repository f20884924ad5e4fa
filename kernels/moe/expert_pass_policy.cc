#include "kernels/moe/expert_pass_policy.h"

#include <algorithm>

namespace gcmoe::kernels {

ExpertPasses expert_passes_for(int rows_per_expert_hint, std::span<PassBand const> bands) {
  int const hint = std::max(rows_per_expert_hint, 1);
  int rows = bands.back().rows;
  for (PassBand const& band : bands) {
    if (hint <= band.max_hint) {
      rows = band.rows;
      break;
    }
  }
  return {rows, std::min((hint + rows - 1) / rows, kMaxParallelPasses)};
}

}  // namespace gcmoe::kernels
