#pragma once
// Collective operations between the ranks of one serving group, the interface that MoE layers
// (expert parallel) and the lockstep step loop use. Implementations: a single rank (no-op),
// ranks as threads or processes over shared memory (CPU backend), NCCL (CUDA backend).
//
// Every rank calls the same collectives in the same order. Every wait has a deadline: a rank that
// never arrives ends the call with DEADLINE_EXCEEDED or UNAVAILABLE, never a hang.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/common/status.h"

namespace gcmoe::runtime {

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual std::int32_t rank() const = 0;
  virtual std::int32_t world_size() const = 0;

  // Gathers every rank's bytes (sizes may differ, zero included) in rank order into `all`;
  // `sizes[r]` is rank r's byte count.
  virtual Status all_gather(std::span<std::byte const> mine, std::vector<std::byte>& all,
                            std::vector<std::size_t>& sizes) = 0;

  // Element-wise sum over ranks, in place; every rank passes the same length. The sum is taken
  // in rank order on every rank, so all ranks get bit-identical results.
  virtual Status all_reduce_sum(std::span<float> data) = 0;

  virtual Status barrier() = 0;
};

}  // namespace gcmoe::runtime
