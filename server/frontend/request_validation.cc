#include "server/frontend/request_validation.h"

#include "engine/common/check.h"

namespace gcmoe::frontend {
namespace {

Status validate_request_id(std::string const& id) {
  GCMOE_CHECK_ARG(id.size() <= kMaxRequestIdBytes, "request_id is {} bytes, the limit is {}",
                  id.size(), kMaxRequestIdBytes);
  for (std::size_t i = 0; i < id.size(); ++i) {
    auto const c = static_cast<unsigned char>(id[i]);
    GCMOE_CHECK_ARG(c > 0x20 && c < 0x7f,
                    "request_id byte {} is 0x{:02x}: only printable ASCII without spaces", i, c);
  }
  return Status();
}

Status validate_token_ids(google::protobuf::RepeatedField<std::uint32_t> const& ids,
                          char const* field, std::uint32_t vocab_size) {
  for (int i = 0; i < ids.size(); ++i) {
    GCMOE_CHECK_ARG(ids[i] < vocab_size, "{}[{}] = {} is outside the vocabulary of {} tokens",
                    field, i, ids[i], vocab_size);
  }
  return Status();
}

}  // namespace

sampling::SamplingParams sampling_params_from_proto(v1::SamplingParams const& proto) {
  sampling::SamplingParams params;
  if (proto.has_temperature()) {
    params.temperature = proto.temperature();
  }
  if (proto.has_top_k()) {
    params.top_k = proto.top_k();
  }
  if (proto.has_top_p()) {
    params.top_p = proto.top_p();
  }
  if (proto.has_min_p()) {
    params.min_p = proto.min_p();
  }
  if (proto.has_repetition_penalty()) {
    params.repetition_penalty = proto.repetition_penalty();
  }
  if (proto.has_frequency_penalty()) {
    params.frequency_penalty = proto.frequency_penalty();
  }
  if (proto.has_presence_penalty()) {
    params.presence_penalty = proto.presence_penalty();
  }
  if (proto.has_seed()) {
    params.seed = proto.seed();
  }
  return params;
}

Status validate_request_shape(v1::GenerateRequest const& request) {
  GCMOE_RETURN_IF_ERROR(validate_request_id(request.request_id()));
  GCMOE_CHECK_ARG(request.prompt_token_ids_size() > 0, "prompt_token_ids is empty");
  GCMOE_CHECK_ARG(request.has_stopping(),
                  "stopping is missing (stopping.max_new_tokens is required)");
  std::uint32_t const max_new = request.stopping().max_new_tokens();
  GCMOE_CHECK_ARG(max_new > 0, "stopping.max_new_tokens must be > 0");
  GCMOE_CHECK_ARG(request.stopping().stop_token_ids_size() <= static_cast<int>(kMaxStopTokenIds),
                  "stopping.stop_token_ids has {} entries, the limit is {}",
                  request.stopping().stop_token_ids_size(), kMaxStopTokenIds);
  Status const sampling =
      sampling::validate_sampling_params(sampling_params_from_proto(request.sampling()));
  return sampling.with_context("sampling");
}

StatusOr<ValidatedRequest> validate_generate_request(v1::GenerateRequest const& request,
                                                     ModelLimits const& limits) {
  GCMOE_RETURN_IF_ERROR(validate_request_shape(request));
  GCMOE_CHECK_INTERNAL(limits.vocab_size > 0 && limits.max_context_tokens > 0,
                       "model limits unset (vocab {}, context {})", limits.vocab_size,
                       limits.max_context_tokens);
  GCMOE_RETURN_IF_ERROR(
      validate_token_ids(request.prompt_token_ids(), "prompt_token_ids", limits.vocab_size));
  GCMOE_RETURN_IF_ERROR(validate_token_ids(request.stopping().stop_token_ids(),
                                           "stopping.stop_token_ids", limits.vocab_size));
  std::uint64_t const prompt = static_cast<std::uint64_t>(request.prompt_token_ids_size());
  std::uint64_t const max_new = request.stopping().max_new_tokens();
  GCMOE_CHECK_ARG(prompt + max_new <= limits.max_context_tokens,
                  "prompt_token_ids ({} tokens) + stopping.max_new_tokens ({}) = {} exceeds the "
                  "model's context of {} tokens",
                  prompt, max_new, prompt + max_new, limits.max_context_tokens);

  ValidatedRequest out;
  out.request_id = request.request_id();
  out.prompt.assign(request.prompt_token_ids().begin(), request.prompt_token_ids().end());
  out.sampling = sampling_params_from_proto(request.sampling());
  out.max_new_tokens = static_cast<std::int32_t>(max_new);
  out.stop_token_ids.assign(request.stopping().stop_token_ids().begin(),
                            request.stopping().stop_token_ids().end());
  out.ignore_eos = request.stopping().ignore_eos();
  return out;
}

}  // namespace gcmoe::frontend
