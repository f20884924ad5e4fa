#pragma once
// One generation request as a rank sees it, and how it ends: what RankEngine::submit takes and
// what its callbacks report.

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "engine/common/status.h"
#include "engine/sampling/sampling_params.h"
#include "engine/scheduler/scheduler_types.h"

namespace gcmoe::runtime {

// Seconds measured on the rank, from submit().
struct SequenceTiming {
  double queue_seconds = 0.0;                // submit -> admitted (KV reserved)
  double time_to_first_token_seconds = 0.0;  // submit -> first token sampled
  double decode_seconds = 0.0;               // first token -> finished
};

struct SequenceResult {
  scheduler::FinishReason reason = scheduler::FinishReason::kLength;
  std::int32_t prompt_tokens = 0;
  std::int32_t generated_tokens = 0;  // every emitted token, a final stop token or EOS included
  SequenceTiming timing;
  // Not OK when the rank failed (model or communicator error, shutdown): reason is kAborted and
  // this says why.
  Status error;
};

struct RankRequest {
  scheduler::SequenceId id = 0;
  std::vector<std::int32_t> prompt;  // non-empty, ids < vocab_size
  sampling::SamplingParams
      sampling;  // seed must be set (admission draws one if the client gave none)
  std::int32_t max_new_tokens = 0;  // >= 1
  std::vector<std::int32_t> stop_token_ids;
  bool ignore_eos = false;
  // Called from the step loop's thread, outside the engine's lock, in order: tokens of one step
  // (usually one), then exactly one on_finished.
  std::function<void(std::span<std::int32_t const> tokens)> on_tokens;
  std::function<void(SequenceResult const& result)> on_finished;
};

}  // namespace gcmoe::runtime
