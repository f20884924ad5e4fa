#pragma once
// Per-request sampling parameters, with vLLM's meanings and defaults. Validation names the field
// that is out of range so the RPC layer can answer INVALID_ARGUMENT with a useful message.

#include <cstdint>
#include <optional>

#include "engine/common/status.h"

namespace gcmoe::sampling {

// Bounds of the additive penalties (OpenAI's and vLLM's range).
inline constexpr float kMaxAbsAdditivePenalty = 2.0f;

struct SamplingParams {
  // Logits are divided by it; 0 = greedy (argmax). Range [0, inf), finite.
  float temperature = 1.0f;
  // Keep only the k most likely tokens; 0 = off; k above the vocabulary keeps all. Range >= 0.
  std::int32_t top_k = 0;
  // Keep the smallest set of most likely tokens whose probability sums to >= top_p. (0, 1].
  float top_p = 1.0f;
  // Drop tokens whose probability is below min_p x the top token's probability. [0, 1].
  float min_p = 0.0f;
  // Tokens seen in prompt or output: positive logits divided, negative multiplied. (0, inf).
  float repetition_penalty = 1.0f;
  // Subtracted from a logit once per occurrence of the token in the output. [-2, 2].
  float frequency_penalty = 0.0f;
  // Subtracted from a logit once if the token occurs in the output. [-2, 2].
  float presence_penalty = 0.0f;
  // The Philox key of this request's draws; admission must assign one when the client gave none
  // (sample_token refuses an unset seed).
  std::optional<std::uint64_t> seed;

  bool greedy() const { return temperature == 0.0f || top_k == 1; }
};

// INVALID_ARGUMENT naming the first field out of its range (NaN and infinities included).
Status validate_sampling_params(SamplingParams const& params);

}  // namespace gcmoe::sampling
