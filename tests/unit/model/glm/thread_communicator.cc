#include "tests/unit/model/glm/thread_communicator.h"

#include <algorithm>
#include <cstring>

#include "engine/common/check.h"

namespace gcmoe::testing {

void ThreadGroup::put(std::int32_t const rank, std::span<std::byte const> bytes) {
  std::lock_guard<std::mutex> const lock(mutex_);
  slots_[static_cast<std::size_t>(rank)].assign(bytes.begin(), bytes.end());
}

Status ThreadGroup::arrive_and_wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  std::uint64_t const generation = generation_;
  if (++arrived_ == world_) {
    arrived_ = 0;
    ++generation_;
    cv_.notify_all();
    return Status();
  }
  if (!cv_.wait_for(lock, deadline_, [&] { return generation_ != generation; })) {
    return deadline_exceeded_error("a rank of the thread group did not arrive");
  }
  return Status();
}

Status ThreadCommunicator::all_gather(std::span<std::byte const> mine, std::vector<std::byte>& all,
                                      std::vector<std::size_t>& sizes) {
  group_.put(rank_, mine);
  GCMOE_RETURN_IF_ERROR(group_.arrive_and_wait());
  all.clear();
  sizes.clear();
  for (std::int32_t r = 0; r < group_.world(); ++r) {
    std::vector<std::byte> const& slot = group_.slot(r);
    all.insert(all.end(), slot.begin(), slot.end());
    sizes.push_back(slot.size());
  }
  // Nobody overwrites a slot before every rank has read it.
  return group_.arrive_and_wait();
}

Status ThreadCommunicator::all_reduce_sum(std::span<float> data) {
  group_.put(rank_, std::as_bytes(data));
  GCMOE_RETURN_IF_ERROR(group_.arrive_and_wait());
  std::vector<float> sum(data.size(), 0.0f);
  std::vector<float> part(data.size());
  for (std::int32_t r = 0; r < group_.world(); ++r) {
    std::vector<std::byte> const& slot = group_.slot(r);
    if (slot.size() != data.size() * sizeof(float)) {
      return invalid_argument_error("all_reduce_sum: ranks passed different lengths");
    }
    std::memcpy(part.data(), slot.data(), slot.size());
    for (std::size_t i = 0; i < sum.size(); ++i) {
      sum[i] += part[i];
    }
  }
  GCMOE_RETURN_IF_ERROR(group_.arrive_and_wait());
  std::copy(sum.begin(), sum.end(), data.begin());
  return Status();
}

}  // namespace gcmoe::testing
