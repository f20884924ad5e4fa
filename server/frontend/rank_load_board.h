#pragma once
// The latest scheduler statistics of every rank, as the ranks report them (over the internal
// stream once rank processes exist), read by GetLoads and the router. Thread-safe.

#include <cstdint>
#include <mutex>
#include <vector>

#include "engine/common/status.h"
#include "engine/scheduler/scheduler_types.h"

namespace gcmoe::frontend {

class RankLoadBoard {
 public:
  explicit RankLoadBoard(std::uint32_t ranks) : stats_(ranks) {}

  // OUT_OF_RANGE for a rank >= ranks().
  Status update(std::uint32_t rank, scheduler::SchedulerStats const& stats);
  std::vector<scheduler::SchedulerStats> snapshot() const;
  std::uint32_t ranks() const { return static_cast<std::uint32_t>(stats_.size()); }

 private:
  mutable std::mutex mutex_;
  std::vector<scheduler::SchedulerStats> stats_;
};

}  // namespace gcmoe::frontend
