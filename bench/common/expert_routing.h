#pragma once
// The random routing of the expert FFN benchmarks (bench/common/expert_batch.h), on the host:
// each token picks top_k distinct experts uniformly at random, and a rank keeps the pairs of its
// local experts [0, local). No CUDA: unit-tested everywhere.

#include <cstdint>
#include <vector>

namespace gcmoe::bench {

struct ExpertRouting {
  std::vector<int> offsets;  // [local + 1]: expert e's rows are [offsets[e], offsets[e + 1])
  std::vector<int> active;   // the local experts with rows, increasing
  int rows = 0;              // pairs kept
  int max_rows_per_expert = 0;
};

// global_tokens ≥ 0, 1 ≤ top_k ≤ experts, 1 ≤ local ≤ experts; the same seed gives the same
// routing.
ExpertRouting random_expert_routing(int global_tokens, int local, int experts, int top_k,
                                    std::uint64_t seed);

}  // namespace gcmoe::bench
