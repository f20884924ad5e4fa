#pragma once
// Checks a public GenerateRequest before it reaches admission and turns it into the engine's
// types. Every problem is INVALID_ARGUMENT with a message naming the field, the value and the
// limit. Two layers: the request's own shape (needs no model) and its fit to the loaded model
// (vocabulary, context length).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/common/status.h"
#include "engine/sampling/sampling_params.h"
#include "gcmoe/v1/generate.pb.h"

namespace gcmoe::frontend {

// Request ids longer than this (bytes) are rejected: they are logged and echoed in every stream
// message.
inline constexpr std::size_t kMaxRequestIdBytes = 128;
// Stop tokens per request; each is checked against every sampled token.
inline constexpr std::size_t kMaxStopTokenIds = 64;

// What the loaded model allows.
struct ModelLimits {
  std::uint32_t vocab_size = 0;
  std::uint32_t max_context_tokens = 0;  // prompt + generated tokens
};

// A request that passed every check, in engine types.
struct ValidatedRequest {
  std::string request_id;  // may be empty: the registry assigns one
  std::vector<std::int32_t> prompt;
  sampling::SamplingParams sampling;
  std::int32_t max_new_tokens = 0;
  std::vector<std::int32_t> stop_token_ids;
  bool ignore_eos = false;
};

// Checks that need no model: request id, non-empty prompt, max_new_tokens > 0, stop-token count,
// sampling ranges.
Status validate_request_shape(v1::GenerateRequest const& request);

// Every check: the shape, then token ids < vocab_size (prompt and stop tokens) and
// prompt + max_new_tokens <= max_context_tokens.
StatusOr<ValidatedRequest> validate_generate_request(v1::GenerateRequest const& request,
                                                     ModelLimits const& limits);

// The engine's sampling parameters from the proto's, defaults where a field is unset.
sampling::SamplingParams sampling_params_from_proto(v1::SamplingParams const& proto);

}  // namespace gcmoe::frontend
