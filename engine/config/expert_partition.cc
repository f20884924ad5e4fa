#include "engine/config/expert_partition.h"

#include "engine/common/check.h"

namespace gcmoe::config {

StatusOr<ExpertRange> experts_of_rank(std::int64_t experts, std::int64_t ranks, std::int64_t rank) {
  GCMOE_CHECK_ARG(ranks > 0 && rank >= 0 && rank < ranks, "rank {} of {} is not a valid rank", rank,
                  ranks);
  GCMOE_CHECK_ARG(experts >= 0 && experts % ranks == 0,
                  "{} experts do not split evenly over {} ranks", experts, ranks);
  std::int64_t const per_rank = experts / ranks;
  return ExpertRange{rank * per_rank, (rank + 1) * per_rank};
}

}  // namespace gcmoe::config
