#pragma once
// The contract between a rank's step loop (engine/runtime, server/) and a model family
// (engine/model/<family>/): one forward step over a continuous batch. A family implements
// StepModel; the step loop never sees layers, KV layout or weights.
//
// Multi-rank (expert parallel): every rank calls step() for every step in lockstep, a rank with
// no work with an empty batch, because MoE layers exchange tokens through the Communicator
// (communicator.h) and every rank must join every layer.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/common/status.h"
#include "engine/scheduler/scheduler_types.h"

namespace gcmoe::runtime {

struct StepModelInfo {
  std::string family;                        // "glm_moe_dsa", ...
  std::int32_t vocab_size = 0;               // logits per sampled row
  std::int32_t max_context = 0;              // prompt + generated positions per sequence
  std::vector<std::uint32_t> eos_token_ids;  // any of them ends a sequence unless ignore_eos
  std::int64_t kv_bytes_per_token = 0;       // all layers, this rank; for memory plans
};

// One step's batch, as the scheduler planned it (scheduler::StepPlan::entries order).
struct StepBatch {
  std::span<scheduler::BatchEntry const> entries;
  // Input token ids, entry after entry: entry i owns entries[i].num_tokens ids. For a decode
  // entry it is the token sampled last step; for a prefill chunk the prompt slice.
  std::span<std::uint32_t const> token_ids;
  // Physical KV blocks of each entry's sequence (scheduler::Scheduler::block_table), covering at
  // least positions [0, start_position + num_tokens).
  std::span<std::span<std::int32_t const> const> block_tables;
};

class StepModel {
 public:
  virtual ~StepModel() = default;

  virtual StepModelInfo const& info() const = 0;

  // Runs every layer over the batch: writes the KV of positions [start, start + num_tokens) of
  // each entry into its blocks, and returns fp32 logits [rows × vocab_size], one row per entry
  // with samples_token, in entry order. An empty batch still joins the MoE exchanges.
  virtual Status step(StepBatch const& batch, std::vector<float>& logits) = 0;
};

}  // namespace gcmoe::runtime
