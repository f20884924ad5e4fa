#pragma once
// Collective operations between the ranks of one serving group, the interface that MoE layers
// (expert parallel) and the lockstep step loop use. Implementations: a single rank (no-op),
// ranks as threads or processes over shared memory (CPU backend), NCCL (CUDA backend).
//
// Every rank calls the same collectives in the same order. Every wait has a deadline: a rank that
// never arrives ends the call with DEADLINE_EXCEEDED or UNAVAILABLE, never a hang.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
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

// One fixed-size record from every rank (handles, ids), in rank order: all_gather of `mine`'s
// bytes, INVALID_ARGUMENT when a rank sent another size (a peer built from other code).
template <typename T>
StatusOr<std::vector<T>> all_gather_each(Communicator& group, T const& mine) {
  static_assert(std::is_trivially_copyable_v<T>, "records cross processes as bytes");
  std::vector<std::byte> all;
  std::vector<std::size_t> sizes;
  Status const gathered = group.all_gather(std::as_bytes(std::span(&mine, 1)), all, sizes);
  if (!gathered.ok()) {
    return gathered;
  }
  std::vector<T> records(sizes.size());
  for (std::size_t r = 0; r < sizes.size(); ++r) {
    if (sizes[r] != sizeof(T)) {
      return Status(StatusCode::kInvalidArgument,
                    "rank " + std::to_string(r) + " sent a " + std::to_string(sizes[r]) +
                        "-byte record, expected " + std::to_string(sizeof(T)));
    }
    std::memcpy(&records[r], all.data() + r * sizeof(T), sizeof(T));
  }
  return records;
}

}  // namespace gcmoe::runtime
