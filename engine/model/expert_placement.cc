#include "engine/model/expert_placement.h"

#include "engine/common/check.h"
#include "engine/config/expert_partition.h"

namespace gcmoe::model {

StatusOr<std::vector<std::int64_t>> ContiguousPlacement::local_experts(
    std::string_view const block_prefix, std::int64_t const experts, std::int64_t const ranks,
    std::int64_t const rank) const {
  auto const range = config::experts_of_rank(experts, ranks, rank);
  if (!range.ok()) {
    return range.status().with_context(block_prefix);
  }
  std::vector<std::int64_t> local;
  for (std::int64_t e = range->begin; e < range->end; ++e) {
    local.push_back(e);
  }
  return local;
}

StatusOr<std::vector<std::int64_t>> OwnerMapPlacement::local_experts(
    std::string_view const block_prefix, std::int64_t const experts, std::int64_t const ranks,
    std::int64_t const rank) const {
  GCMOE_CHECK_ARG(ranks > 0 && rank >= 0 && rank < ranks, "rank {} of {} is not a valid rank", rank,
                  ranks);
  std::vector<std::int64_t> local;
  for (std::int64_t e = 0; e < experts; ++e) {
    std::int64_t const owner = owner_(e, experts, ranks);
    GCMOE_CHECK_ARG(owner >= 0 && owner < ranks, "{}: expert {} mapped to rank {} of {}",
                    block_prefix, e, owner, ranks);
    if (owner == rank) {
      local.push_back(e);
    }
  }
  return local;
}

OwnerMapPlacement round_robin_placement() {
  return OwnerMapPlacement([](std::int64_t const expert, std::int64_t, std::int64_t const ranks) {
    return expert % ranks;
  });
}

}  // namespace gcmoe::model
