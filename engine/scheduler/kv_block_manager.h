#pragma once
// KV-cache block accounting for one rank: the cache is `total_blocks` fixed-size blocks of
// `block_size` token positions. A sequence reserves blocks for its whole lifetime (prompt +
// max_new_tokens) when admitted, so a running sequence can always grow and is never evicted;
// physical block ids are handed out lazily as its positions are computed (grow_to), which keeps
// the usage statistic honest (allocated = holding KV, reserved = promised).
//
// Invariants: reserved <= total; per sequence, allocated <= reserved; a block id belongs to at
// most one sequence.

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "engine/common/status.h"
#include "engine/scheduler/sequence_id.h"

namespace gcmoe::scheduler {

struct KvUsage {
  std::int32_t block_size = 0;  // token positions per block
  std::int32_t total_blocks = 0;
  std::int32_t reserved_blocks = 0;   // promised to admitted sequences
  std::int32_t allocated_blocks = 0;  // holding computed positions (<= reserved)
  std::int32_t sequences = 0;
};

class KvBlockManager {
 public:
  // INVALID_ARGUMENT unless both are positive.
  static StatusOr<KvBlockManager> create(std::int32_t total_blocks, std::int32_t block_size);

  // Blocks covering `tokens` positions (ceil division).
  std::int64_t blocks_for_tokens(std::int64_t tokens) const;
  // Whether a reservation of `tokens` positions fits next to the current ones.
  bool can_reserve(std::int64_t tokens) const;

  // ALREADY_EXISTS for a known id, INVALID_ARGUMENT for tokens <= 0, RESOURCE_EXHAUSTED when the
  // reservation does not fit.
  Status reserve(SequenceId id, std::int64_t tokens);
  // Allocates blocks until positions [0, tokens) are covered. OUT_OF_RANGE beyond the reservation,
  // NOT_FOUND for an unknown id. Never shrinks.
  Status grow_to(SequenceId id, std::int64_t tokens);
  // The sequence's physical block ids in position order. NOT_FOUND for an unknown id.
  StatusOr<std::span<std::int32_t const>> block_table(SequenceId id) const;
  // Frees the reservation and every allocated block. NOT_FOUND for an unknown id.
  Status release(SequenceId id);

  KvUsage usage() const;

 private:
  KvBlockManager(std::int32_t total_blocks, std::int32_t block_size);

  struct Reservation {
    std::int32_t reserved_blocks = 0;
    std::vector<std::int32_t> table;
  };

  std::int32_t total_blocks_;
  std::int32_t block_size_;
  std::int32_t reserved_blocks_ = 0;
  std::vector<std::int32_t> free_blocks_;  // a stack; the lowest ids are handed out first
  std::unordered_map<SequenceId, Reservation> sequences_;
};

}  // namespace gcmoe::scheduler
