#pragma once
// What goes into and comes out of the continuous-batching Scheduler: its limits, a sequence's
// shape, the per-step batch plan, and how sequences end.

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/scheduler/sequence_id.h"

namespace gcmoe::scheduler {

struct SchedulerConfig {
  // Requests waiting for admission; one more is answered RESOURCE_EXHAUSTED.
  std::int32_t max_waiting_requests = 256;
  // Sequences holding KV (prefilling or decoding) at once.
  std::int32_t max_running_requests = 64;
  // Tokens per step: one per decoding sequence plus prefill chunks. Must be >=
  // max_running_requests so every running sequence decodes every step.
  std::int32_t max_batch_tokens = 2048;
  // The rank's KV cache: blocks x positions per block.
  std::int32_t kv_blocks = 1024;
  std::int32_t kv_block_size = 16;
};

struct SequenceSpec {
  SequenceId id = 0;
  std::int32_t prompt_tokens = 0;   // >= 1
  std::int32_t max_new_tokens = 0;  // >= 1
};

// One sequence's share of a step.
struct BatchEntry {
  SequenceId id = 0;
  std::int32_t start_position = 0;  // first position this entry computes
  std::int32_t num_tokens = 0;      // positions [start, start + num_tokens)
  bool is_prefill = false;          // prompt positions (a chunk), else one decode token
  bool samples_token = false;       // the step ends with a token sampled for this sequence
};

struct StepPlan {
  std::uint64_t step = 0;
  std::vector<BatchEntry> entries;   // decodes first, then prefill chunks, admission order
  std::vector<SequenceId> admitted;  // sequences admitted from the queue by this plan
  std::int32_t num_tokens = 0;       // sum of entries' num_tokens; <= max_batch_tokens
};

enum class FinishReason {
  kLength,     // max_new_tokens generated
  kStopToken,  // one of the request's stop tokens was sampled
  kEos,        // the model's EOS token was sampled
  kAborted,    // Abort, client cancel, deadline, or a rank fault
};

std::string_view finish_reason_name(FinishReason reason);

// A sequence that stopped this step on a sampled token (stop token or EOS).
struct StopEvent {
  SequenceId id = 0;
  FinishReason reason = FinishReason::kStopToken;
};

struct FinishedSequence {
  SequenceId id = 0;
  FinishReason reason = FinishReason::kLength;
  std::int32_t prompt_tokens = 0;
  std::int32_t generated_tokens = 0;
};

struct SchedulerStats {
  std::int32_t waiting = 0;
  std::int32_t running = 0;
  std::int32_t kv_blocks_total = 0;
  std::int32_t kv_blocks_reserved = 0;
  std::int32_t kv_blocks_allocated = 0;
  std::uint64_t steps = 0;
  std::uint64_t finished = 0;
};

}  // namespace gcmoe::scheduler
