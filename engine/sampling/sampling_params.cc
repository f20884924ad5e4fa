#include "engine/sampling/sampling_params.h"

#include <cmath>

#include "engine/common/check.h"

namespace gcmoe::sampling {

Status validate_sampling_params(SamplingParams const& params) {
  GCMOE_CHECK_ARG(std::isfinite(params.temperature) && params.temperature >= 0.0f,
                  "temperature must be finite and >= 0, got {}", params.temperature);
  GCMOE_CHECK_ARG(params.top_k >= 0, "top_k must be >= 0 (0 = off), got {}", params.top_k);
  GCMOE_CHECK_ARG(params.top_p > 0.0f && params.top_p <= 1.0f, "top_p must be in (0, 1], got {}",
                  params.top_p);
  GCMOE_CHECK_ARG(params.min_p >= 0.0f && params.min_p <= 1.0f, "min_p must be in [0, 1], got {}",
                  params.min_p);
  GCMOE_CHECK_ARG(std::isfinite(params.repetition_penalty) && params.repetition_penalty > 0.0f,
                  "repetition_penalty must be finite and > 0, got {}", params.repetition_penalty);
  GCMOE_CHECK_ARG(std::abs(params.frequency_penalty) <= kMaxAbsAdditivePenalty,
                  "frequency_penalty must be in [-{}, {}], got {}", kMaxAbsAdditivePenalty,
                  kMaxAbsAdditivePenalty, params.frequency_penalty);
  GCMOE_CHECK_ARG(std::abs(params.presence_penalty) <= kMaxAbsAdditivePenalty,
                  "presence_penalty must be in [-{}, {}], got {}", kMaxAbsAdditivePenalty,
                  kMaxAbsAdditivePenalty, params.presence_penalty);
  return Status();
}

}  // namespace gcmoe::sampling
