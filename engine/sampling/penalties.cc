#include "engine/sampling/penalties.h"

#include <unordered_map>
#include <unordered_set>

#include "engine/common/check.h"

namespace gcmoe::sampling {
namespace {

Status check_in_vocab(std::span<std::int32_t const> tokens, std::size_t vocab, char const* what) {
  for (std::int32_t const token : tokens) {
    GCMOE_CHECK_ARG(token >= 0 && static_cast<std::size_t>(token) < vocab,
                    "{} token {} outside the vocabulary of {}", what, token, vocab);
  }
  return Status();
}

}  // namespace

Status apply_penalties(std::span<float> logits, SamplingParams const& params,
                       TokenHistory const& history) {
  GCMOE_RETURN_IF_ERROR(check_in_vocab(history.prompt, logits.size(), "prompt"));
  GCMOE_RETURN_IF_ERROR(check_in_vocab(history.output, logits.size(), "output"));

  if (params.repetition_penalty != 1.0f) {
    // Each seen token is penalized once, however often it occurs.
    std::unordered_set<std::int32_t> seen(history.prompt.begin(), history.prompt.end());
    seen.insert(history.output.begin(), history.output.end());
    for (std::int32_t const token : seen) {
      float& logit = logits[static_cast<std::size_t>(token)];
      logit = logit > 0.0f ? logit / params.repetition_penalty : logit * params.repetition_penalty;
    }
  }
  if (params.frequency_penalty != 0.0f || params.presence_penalty != 0.0f) {
    std::unordered_map<std::int32_t, int> counts;
    for (std::int32_t const token : history.output) {
      ++counts[token];
    }
    for (auto const& [token, count] : counts) {
      logits[static_cast<std::size_t>(token)] -=
          params.frequency_penalty * static_cast<float>(count) + params.presence_penalty;
    }
  }
  return Status();
}

}  // namespace gcmoe::sampling
