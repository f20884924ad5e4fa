#include "kernels/moe/expert_rows_hint.h"

#include <algorithm>
#include <cmath>

namespace gcmoe::kernels {

int routed_rows_hint(int tokens, int top_k, int experts) {
  if (tokens <= 0) {
    return 0;
  }
  double const mean =
      static_cast<double>(tokens) * std::max(top_k, 1) / static_cast<double>(std::max(experts, 1));
  int const tail = static_cast<int>(std::ceil(mean + 3.0 * std::sqrt(mean) + 1.0));
  return std::clamp(tail, 1, tokens);
}

}  // namespace gcmoe::kernels
