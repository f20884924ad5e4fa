#include "bench/common/expert_routing.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <utility>

namespace gcmoe::bench {

ExpertRouting random_expert_routing(int global_tokens, int local, int experts, int top_k,
                                    std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int> count(local, 0);
  std::vector<int> pool(experts);
  for (int t = 0; t < global_tokens; ++t) {
    // A partial Fisher-Yates shuffle: the first top_k of the pool are distinct.
    std::iota(pool.begin(), pool.end(), 0);
    for (int k = 0; k < top_k; ++k) {
      std::swap(pool[k], pool[k + rng() % (experts - k)]);
      if (pool[k] < local) {
        ++count[pool[k]];
      }
    }
  }
  ExpertRouting r;
  r.offsets = {0};
  for (int e = 0; e < local; ++e) {
    r.offsets.push_back(r.offsets.back() + count[e]);
    if (count[e] > 0) {
      r.active.push_back(e);
    }
  }
  r.rows = r.offsets.back();
  r.max_rows_per_expert = *std::max_element(count.begin(), count.end());
  return r;
}

}  // namespace gcmoe::bench
