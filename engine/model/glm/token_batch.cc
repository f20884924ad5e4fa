#include "engine/model/glm/token_batch.h"

#include <fmt/format.h>

#include "engine/common/check.h"

namespace gcmoe::model::glm {

StatusOr<TokenBatch> make_token_batch(runtime::StepBatch const& batch, BatchLimits const& limits) {
  GCMOE_CHECK_ARG(batch.block_tables.size() == batch.entries.size(),
                  "step batch: {} entries but {} block tables", batch.entries.size(),
                  batch.block_tables.size());
  std::int64_t total = 0;
  for (scheduler::BatchEntry const& e : batch.entries) {
    GCMOE_CHECK_ARG(e.num_tokens >= 1, "step batch: sequence {} has {} tokens", e.id, e.num_tokens);
    total += e.num_tokens;
  }
  GCMOE_CHECK_ARG(static_cast<std::int64_t>(batch.token_ids.size()) == total,
                  "step batch: {} token ids for entries totalling {} tokens",
                  batch.token_ids.size(), total);
  GCMOE_CHECK_ARG(total <= limits.max_batch_tokens,
                  "step batch: {} tokens exceed max_batch_tokens {}", total,
                  limits.max_batch_tokens);
  TokenBatch out;
  out.ids.reserve(static_cast<std::size_t>(total));
  out.positions.reserve(static_cast<std::size_t>(total));
  out.entry.reserve(static_cast<std::size_t>(total));
  std::size_t next = 0;
  for (std::size_t i = 0; i < batch.entries.size(); ++i) {
    scheduler::BatchEntry const& e = batch.entries[i];
    std::span<std::int32_t const> const table = batch.block_tables[i];
    GCMOE_CHECK_ARG(e.start_position >= 0, "step batch: sequence {} starts at position {}", e.id,
                    e.start_position);
    std::int64_t const end = static_cast<std::int64_t>(e.start_position) + e.num_tokens;
    GCMOE_CHECK_ARG(end <= limits.max_context,
                    "step batch: sequence {} reaches position {}, past the model's context of {} "
                    "positions",
                    e.id, end - 1, limits.max_context);
    std::int64_t const blocks_needed = (end + limits.kv_block_size - 1) / limits.kv_block_size;
    GCMOE_CHECK_ARG(static_cast<std::int64_t>(table.size()) >= blocks_needed,
                    "step batch: sequence {} needs {} KV blocks for {} positions, its block table "
                    "has {}",
                    e.id, blocks_needed, end, table.size());
    for (std::int64_t b = 0; b < blocks_needed; ++b) {
      std::int32_t const block = table[static_cast<std::size_t>(b)];
      GCMOE_CHECK_ARG(block >= 0 && block < limits.kv_blocks,
                      "step batch: sequence {} block table entry {} = {} is outside the {} KV "
                      "blocks",
                      e.id, b, block, limits.kv_blocks);
    }
    out.block_tables.push_back(table);
    for (std::int32_t t = 0; t < e.num_tokens; ++t, ++next) {
      std::uint32_t const id = batch.token_ids[next];
      GCMOE_CHECK_ARG(id < limits.vocab,
                      "step batch: sequence {} token {} is {}, outside the "
                      "vocabulary of {}",
                      e.id, t, id, limits.vocab);
      out.ids.push_back(id);
      out.positions.push_back(e.start_position + t);
      out.entry.push_back(static_cast<std::int32_t>(i));
    }
    if (e.samples_token) {
      out.sample_rows.push_back(static_cast<std::int64_t>(next) - 1);
    }
  }
  return out;
}

}  // namespace gcmoe::model::glm
