#pragma once
// runtime::Communicator for ranks that are threads of one test process: every collective meets
// at a generation barrier over shared slots. Each wait has a deadline (DEADLINE_EXCEEDED).

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "engine/runtime/communicator.h"

namespace gcmoe::testing {

class ThreadGroup {
 public:
  explicit ThreadGroup(std::int32_t world,
                       std::chrono::milliseconds deadline = std::chrono::seconds(60))
      : world_(world), deadline_(deadline), slots_(static_cast<std::size_t>(world)) {}

  std::int32_t world() const { return world_; }

  // Stores `bytes` in this rank's slot.
  void put(std::int32_t rank, std::span<std::byte const> bytes);
  std::vector<std::byte> const& slot(std::int32_t rank) const {
    return slots_[static_cast<std::size_t>(rank)];
  }
  // Returns when every rank has arrived (or DEADLINE_EXCEEDED).
  Status arrive_and_wait();

 private:
  std::int32_t world_;
  std::chrono::milliseconds deadline_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::int32_t arrived_ = 0;
  std::uint64_t generation_ = 0;
  std::vector<std::vector<std::byte>> slots_;
};

class ThreadCommunicator final : public runtime::Communicator {
 public:
  ThreadCommunicator(ThreadGroup& group, std::int32_t rank) : group_(group), rank_(rank) {}

  std::int32_t rank() const override { return rank_; }
  std::int32_t world_size() const override { return group_.world(); }
  Status all_gather(std::span<std::byte const> mine, std::vector<std::byte>& all,
                    std::vector<std::size_t>& sizes) override;
  Status all_reduce_sum(std::span<float> data) override;
  Status barrier() override { return group_.arrive_and_wait(); }

 private:
  ThreadGroup& group_;
  std::int32_t rank_;
};

}  // namespace gcmoe::testing
