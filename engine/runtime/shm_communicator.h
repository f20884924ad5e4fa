#pragma once
// The Communicator of ranks that share one host: processes (the CPU backend's workers) or threads
// (tests), over one POSIX shared-memory segment.
//
// Layout: a header (magic, session nonce, world size, slot size, a poison flag, per rank its pid
// and the number of the last collective it posted), then two banks of one slot per rank.
// Collective k writes the caller's bytes into bank k % 2, publishes k, waits until every rank has
// published k, and reads the bank (an all_gather larger than a slot takes several such rounds). Two
// banks suffice: a rank can only post k + 1 after every rank posted k, i.e. after every rank
// finished reading k - 1, the previous user of that bank.
//
// The segment's name is unlinked as soon as every rank has joined (or the join failed): the
// mapping lives on in the ranks and nothing is left in /dev/shm however they end.
//
// Every wait has a deadline. A rank whose process is gone (its pid no longer exists) ends the
// wait at once with UNAVAILABLE; a rank that does not arrive in time ends it with
// DEADLINE_EXCEEDED. Either way the segment is poisoned, so every other rank fails its next wait
// at once too: a dead rank costs the group seconds, never a hang.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "engine/runtime/communicator.h"

namespace gcmoe::runtime {

struct ShmCommunicatorOptions {
  std::string name;           // POSIX shm name, "/gcmoe-..." (one per group and start)
  std::uint64_t session = 0;  // nonce every rank of the group knows: a stale segment never matches
  std::int32_t rank = 0;
  std::int32_t world_size = 1;
  // Bytes one rank contributes per round; larger contributions take several rounds.
  std::size_t slot_bytes = std::size_t{4} << 20;
  // How long one collective waits for the slowest rank (it must exceed the longest step).
  std::chrono::milliseconds timeout{30000};
  // How long create() waits for rank 0's segment and for every rank to join.
  std::chrono::milliseconds join_timeout{30000};
};

class ShmCommunicator final : public Communicator {
 public:
  // Rank 0 creates the segment (replacing one of the same name), the others open it; returns
  // once every rank has joined. DEADLINE_EXCEEDED when the group does not assemble in
  // join_timeout; INVALID_ARGUMENT for bad options or a segment of another shape.
  static StatusOr<std::unique_ptr<ShmCommunicator>> create(ShmCommunicatorOptions const& options);
  ~ShmCommunicator() override;
  ShmCommunicator(ShmCommunicator const&) = delete;
  ShmCommunicator& operator=(ShmCommunicator const&) = delete;

  std::int32_t rank() const override { return options_.rank; }
  std::int32_t world_size() const override { return options_.world_size; }

  Status all_gather(std::span<std::byte const> mine, std::vector<std::byte>& all,
                    std::vector<std::size_t>& sizes) override;
  Status all_reduce_sum(std::span<float> data) override;
  Status barrier() override;

  // Marks the group failed so every rank's next wait ends with UNAVAILABLE(reason).
  void poison(std::string const& reason);

 private:
  struct Header;
  struct RankSlot;

  explicit ShmCommunicator(ShmCommunicatorOptions const& options);
  Status map_segment(bool create);
  Status wait_for_all(std::uint64_t op, std::chrono::steady_clock::time_point deadline);
  Status fail(Status status);
  RankSlot& slot(std::uint64_t op, std::int32_t rank) const;

  ShmCommunicatorOptions options_;
  void* base_ = nullptr;
  std::size_t bytes_ = 0;
  std::uint64_t ops_ = 0;  // collectives this rank has posted
};

}  // namespace gcmoe::runtime
