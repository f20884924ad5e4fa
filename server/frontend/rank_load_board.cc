#include "server/frontend/rank_load_board.h"

#include <fmt/format.h>

namespace gcmoe::frontend {

Status RankLoadBoard::update(std::uint32_t rank, scheduler::SchedulerStats const& stats) {
  std::lock_guard<std::mutex> const lock(mutex_);
  if (rank >= stats_.size()) {
    return out_of_range_error(fmt::format("rank {} of {}", rank, stats_.size()));
  }
  stats_[rank] = stats;
  return Status();
}

std::vector<scheduler::SchedulerStats> RankLoadBoard::snapshot() const {
  std::lock_guard<std::mutex> const lock(mutex_);
  return stats_;
}

}  // namespace gcmoe::frontend
