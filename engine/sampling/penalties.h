#pragma once
// Repetition, frequency and presence penalties applied to one row of logits, as vLLM does:
// - repetition (multiplicative, CTRL paper): every token seen in prompt or output has its logit
//   divided by the penalty when positive and multiplied by it when not;
// - frequency: logit -= frequency_penalty x (occurrences of the token in the output);
// - presence:  logit -= presence_penalty if the token occurs in the output at all.
// The prompt counts only for the repetition penalty.

#include <cstdint>
#include <span>

#include "engine/common/status.h"
#include "engine/sampling/sampling_params.h"

namespace gcmoe::sampling {

// The tokens a sequence has so far: its prompt and the tokens it generated.
struct TokenHistory {
  std::span<std::int32_t const> prompt;
  std::span<std::int32_t const> output;
};

// Rewrites `logits` in place. INVALID_ARGUMENT if a history token is outside the vocabulary
// (logits.size()).
Status apply_penalties(std::span<float> logits, SamplingParams const& params,
                       TokenHistory const& history);

}  // namespace gcmoe::sampling
