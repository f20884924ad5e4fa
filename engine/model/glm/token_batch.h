#pragma once
// A StepBatch (engine/runtime/step_model.h) checked and flattened to one row per token: its id,
// position, sequence (entry) and the entry's block table; plus which rows return logits. Every
// input error is INVALID_ARGUMENT naming the entry, so a bad request never reaches the layers.

#include <cstdint>
#include <span>
#include <vector>

#include "engine/common/status.h"
#include "engine/runtime/step_model.h"

namespace gcmoe::model::glm {

struct BatchLimits {
  std::int64_t vocab = 0;
  std::int32_t max_context = 0;  // positions per sequence
  std::int32_t kv_blocks = 0;    // physical blocks of this rank's cache
  std::int32_t kv_block_size = 0;
  std::int32_t max_batch_tokens = 0;
};

struct TokenBatch {
  std::vector<std::uint32_t> ids;                           // [tokens]
  std::vector<std::int32_t> positions;                      // [tokens]
  std::vector<std::int32_t> entry;                          // [tokens] index into block_tables
  std::vector<std::span<std::int32_t const>> block_tables;  // per entry
  std::vector<std::int64_t> sample_rows;  // token rows whose logits step() returns, entry order

  std::int64_t tokens() const { return static_cast<std::int64_t>(ids.size()); }
};

// Checks: token count = Σ num_tokens ≤ max_batch_tokens, one block table per entry, each entry's
// num_tokens ≥ 1 and start ≥ 0 with start + num_tokens ≤ max_context, ids < vocab, block tables
// covering [0, start + num_tokens) with block ids in [0, kv_blocks).
StatusOr<TokenBatch> make_token_batch(runtime::StepBatch const& batch, BatchLimits const& limits);

// The KV cache row of `position` of a sequence: table[position / block_size] · block_size +
// position % block_size (make_token_batch checked the table covers it).
inline std::int64_t kv_row(std::span<std::int32_t const> table, std::int32_t const position,
                           std::int32_t const block_size) {
  return static_cast<std::int64_t>(table[static_cast<std::size_t>(position / block_size)]) *
             block_size +
         position % block_size;
}

}  // namespace gcmoe::model::glm
