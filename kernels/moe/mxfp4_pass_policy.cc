#include "kernels/moe/mxfp4_pass_policy.h"

#include <algorithm>

namespace gcmoe::kernels {

Mxfp4Passes mxfp4_passes_for(int rows_per_expert_hint) {
  int const hint = std::max(rows_per_expert_hint, 1);
  int const rows = hint <= kMxfp4EightRowLimit ? 8 : (hint <= kMxfp4SixteenRowLimit ? 16 : 32);
  return {rows, std::min((hint + rows - 1) / rows, kMxfp4MaxParallelPasses)};
}

}  // namespace gcmoe::kernels
