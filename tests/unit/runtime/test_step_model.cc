#include "tests/unit/runtime/test_step_model.h"

#include <fmt/format.h>

#include <array>
#include <thread>

#include "engine/common/check.h"

namespace gcmoe::testing {
namespace {

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h *= 0xff51afd7ed558ccdULL;
  return h ^ (h >> 33);
}

}  // namespace

TestStepModel::TestStepModel(TestStepModelOptions const& options, runtime::Communicator& comm)
    : options_(options),
      comm_(comm),
      kv_(static_cast<std::size_t>(options.kv_blocks) *
              static_cast<std::size_t>(options.kv_block_size),
          -1) {
  info_.family = "test_double";
  info_.vocab_size = options.vocab_size;
  info_.max_context = options.max_context;
  info_.eos_token_ids = options.eos_token_ids;
  info_.kv_bytes_per_token = sizeof(std::int32_t);
}

std::vector<float> TestStepModel::reference_logits(std::span<std::int32_t const> tokens,
                                                   std::int32_t vocab_size) {
  std::uint64_t h = 1469598103934665603ULL;
  for (std::int32_t const t : tokens) {
    h = mix(h, static_cast<std::uint64_t>(t));
  }
  std::vector<float> row(static_cast<std::size_t>(vocab_size));
  for (std::size_t v = 0; v < row.size(); ++v) {
    std::uint64_t const r = mix(h, v + 1);
    row[v] =
        static_cast<float>(static_cast<double>(r >> 40) / static_cast<double>(1ULL << 24)) * 8.0f -
        4.0f;
  }
  return row;
}

Status TestStepModel::step(runtime::StepBatch const& batch, std::vector<float>& logits) {
  std::int64_t const step = steps_.fetch_add(1);
  if (batch.entries.empty()) {
    empty_steps_.fetch_add(1);
  }
  // The "MoE exchange": every rank must be at the same step.
  std::array<float, 2> joined = {1.0f, static_cast<float>(step)};
  GCMOE_RETURN_IF_ERROR(comm_.all_reduce_sum(joined));
  GCMOE_CHECK_INTERNAL(joined[0] == static_cast<float>(comm_.world_size()) &&
                           joined[1] == static_cast<float>(step) * joined[0],
                       "ranks out of lockstep at step {}", step);
  if (step == options_.fail_at_step) {
    return internal_error(fmt::format("test double: injected failure at step {}", step));
  }
  if (options_.step_delay.count() > 0) {
    std::this_thread::sleep_for(options_.step_delay);
  }
  std::size_t const bs = static_cast<std::size_t>(options_.kv_block_size);
  logits.clear();
  std::size_t offset = 0;
  for (std::size_t e = 0; e < batch.entries.size(); ++e) {
    scheduler::BatchEntry const& entry = batch.entries[e];
    std::span<std::int32_t const> const table = batch.block_tables[e];
    for (std::int32_t i = 0; i < entry.num_tokens; ++i) {
      std::size_t const pos = static_cast<std::size_t>(entry.start_position + i);
      GCMOE_CHECK_ARG(pos / bs < table.size(), "position {} beyond the block table", pos);
      kv_[static_cast<std::size_t>(table[pos / bs]) * bs + pos % bs] =
          static_cast<std::int32_t>(batch.token_ids[offset++]);
    }
    if (entry.samples_token) {
      std::size_t const end = static_cast<std::size_t>(entry.start_position + entry.num_tokens);
      std::vector<std::int32_t> tokens(end);
      for (std::size_t pos = 0; pos < end; ++pos) {
        tokens[pos] = kv_[static_cast<std::size_t>(table[pos / bs]) * bs + pos % bs];
      }
      std::vector<float> const row = reference_logits(tokens, options_.vocab_size);
      logits.insert(logits.end(), row.begin(), row.end());
    }
  }
  GCMOE_CHECK_ARG(offset == batch.token_ids.size(), "batch has {} token ids, entries use {}",
                  batch.token_ids.size(), offset);
  return Status();
}

}  // namespace gcmoe::testing
