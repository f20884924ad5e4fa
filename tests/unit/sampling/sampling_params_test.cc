#include "engine/sampling/sampling_params.h"

#include <limits>
#include <string>

#include "tests/support/catch.h"

namespace gcmoe::sampling {
namespace {

// The status of params with one field changed, expected INVALID_ARGUMENT naming `field`.
void check_rejected(SamplingParams const& params, std::string const& field) {
  Status const status = validate_sampling_params(params);
  INFO(field << ": " << status.to_string());
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK(status.message().find(field) != std::string::npos);
}

TEST_CASE("default and boundary sampling params are valid") {
  CHECK(validate_sampling_params({}).ok());
  SamplingParams edge;
  edge.temperature = 0.0f;
  edge.top_k = 1;
  edge.top_p = 1.0f;
  edge.min_p = 1.0f;
  edge.repetition_penalty = 0.01f;
  edge.frequency_penalty = -2.0f;
  edge.presence_penalty = 2.0f;
  CHECK(validate_sampling_params(edge).ok());
  edge.top_k = 1 << 30;  // above any vocabulary: keeps everything
  edge.top_p = 1e-6f;
  edge.min_p = 0.0f;
  CHECK(validate_sampling_params(edge).ok());
}

TEST_CASE("out-of-range sampling params name their field") {
  float const nan = std::numeric_limits<float>::quiet_NaN();
  float const inf = std::numeric_limits<float>::infinity();
  auto with = [](auto mutate) {
    SamplingParams p;
    mutate(p);
    return p;
  };
  check_rejected(with([](auto& p) { p.temperature = -0.1f; }), "temperature");
  check_rejected(with([&](auto& p) { p.temperature = nan; }), "temperature");
  check_rejected(with([&](auto& p) { p.temperature = inf; }), "temperature");
  check_rejected(with([](auto& p) { p.top_k = -1; }), "top_k");
  check_rejected(with([](auto& p) { p.top_p = 0.0f; }), "top_p");
  check_rejected(with([](auto& p) { p.top_p = 1.01f; }), "top_p");
  check_rejected(with([&](auto& p) { p.top_p = nan; }), "top_p");
  check_rejected(with([](auto& p) { p.min_p = -0.01f; }), "min_p");
  check_rejected(with([](auto& p) { p.min_p = 1.5f; }), "min_p");
  check_rejected(with([](auto& p) { p.repetition_penalty = 0.0f; }), "repetition_penalty");
  check_rejected(with([&](auto& p) { p.repetition_penalty = inf; }), "repetition_penalty");
  check_rejected(with([](auto& p) { p.frequency_penalty = 2.5f; }), "frequency_penalty");
  check_rejected(with([&](auto& p) { p.frequency_penalty = nan; }), "frequency_penalty");
  check_rejected(with([](auto& p) { p.presence_penalty = -2.01f; }), "presence_penalty");
}

TEST_CASE("greedy means temperature 0 or top_k 1") {
  SamplingParams p;
  CHECK_FALSE(p.greedy());
  p.temperature = 0.0f;
  CHECK(p.greedy());
  p.temperature = 0.7f;
  p.top_k = 1;
  CHECK(p.greedy());
}

}  // namespace
}  // namespace gcmoe::sampling
