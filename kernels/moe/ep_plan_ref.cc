#include "kernels/moe/ep_plan_ref.h"

#include "engine/common/check.h"

namespace gcmoe::kernels {

StatusOr<EpPlan> ep_plan_ref(std::span<int const> counts, int ranks, int experts, int rank) {
  GCMOE_CHECK_ARG(ranks >= 1 && experts >= ranks && experts % ranks == 0,
                  "{} experts over {} ranks: need a positive multiple", experts, ranks);
  GCMOE_CHECK_ARG(rank >= 0 && rank < ranks, "rank {} of {}", rank, ranks);
  GCMOE_CHECK_ARG(counts.size() == static_cast<std::size_t>(ranks) * experts,
                  "count matrix of {} entries, expected {}", counts.size(), ranks * experts);
  for (int const c : counts) {
    GCMOE_CHECK_ARG(c >= 0, "negative count {}", c);
  }
  int const local = experts / ranks;
  std::vector<int> total(static_cast<std::size_t>(experts), 0);
  for (int s = 0; s < ranks; ++s) {
    for (int e = 0; e < experts; ++e) {
      total[static_cast<std::size_t>(e)] += counts[static_cast<std::size_t>(s * experts + e)];
    }
  }
  EpPlan plan;
  plan.send_base.resize(static_cast<std::size_t>(experts));
  for (int e = 0; e < experts; ++e) {
    int const first = e / local * local;  // the owner's first expert
    int base = 0;
    for (int f = first; f < e; ++f) {
      base += total[static_cast<std::size_t>(f)];
    }
    for (int s = 0; s < rank; ++s) {
      base += counts[static_cast<std::size_t>(s * experts + e)];
    }
    plan.send_base[static_cast<std::size_t>(e)] = base;
  }
  plan.recv_offsets.assign(static_cast<std::size_t>(local) + 1, 0);
  for (int l = 0; l < local; ++l) {
    int const rows = total[static_cast<std::size_t>(rank * local + l)];
    plan.recv_offsets[static_cast<std::size_t>(l) + 1] =
        plan.recv_offsets[static_cast<std::size_t>(l)] + rows;
    if (rows > 0) {
      plan.active.push_back(l);
    }
  }
  return plan;
}

}  // namespace gcmoe::kernels
