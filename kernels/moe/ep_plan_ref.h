#pragma once
// The cross-rank row layout of one expert-parallel MoE step (GC-MoE across ranks), computed by
// every rank from the same count matrix: counts[s·E + e] = pairs source rank s routed to expert e.
// Experts are owned in contiguous ranges of E/R (rank d owns [d·E/R, (d+1)·E/R)). At the owner,
// each local expert's received rows are contiguous and ordered by source rank, so a sender knows
// where its rows go without asking: the rows source s sends to expert e start at
//   send_base[e] = Σ_{e' owned by owner(e), e' < e} Σ_s' counts[s'][e'] + Σ_{s' < s} counts[s'][e]
// and follow in s's own expert-sorted order. The device twin is kernels/moe/ep_dispatch.cu.

#include <span>
#include <vector>

#include "engine/common/status.h"

namespace gcmoe::kernels {

struct EpPlan {
  std::vector<int> send_base;     // [E]: this rank's first row at owner(e) for its pairs to e
  std::vector<int> recv_offsets;  // [E/R + 1]: this rank's local experts' row segments
  std::vector<int> active;        // this rank's local experts with rows, ascending (local index)
};

// ranks ≥ 1 divides experts; counts has ranks·experts non-negative entries.
StatusOr<EpPlan> ep_plan_ref(std::span<int const> counts, int ranks, int experts, int rank);

}  // namespace gcmoe::kernels
