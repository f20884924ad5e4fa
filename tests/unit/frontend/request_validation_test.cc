#include "server/frontend/request_validation.h"

#include <functional>
#include <limits>
#include <string>

#include "tests/support/catch.h"

namespace gcmoe::frontend {
namespace {

ModelLimits const kLimits{1000, 64};  // vocab 1000, context 64

v1::GenerateRequest valid_request() {
  v1::GenerateRequest r;
  r.set_request_id("req-1");
  r.add_prompt_token_ids(1);
  r.add_prompt_token_ids(999);
  r.mutable_stopping()->set_max_new_tokens(8);
  r.mutable_stopping()->add_stop_token_ids(2);
  return r;
}

struct Malformed {
  char const* what;
  std::function<void(v1::GenerateRequest&)> mutate;
  char const* names;  // the message must contain this
};

TEST_CASE("a well-formed request validates and converts with defaults") {
  StatusOr<ValidatedRequest> const v = validate_generate_request(valid_request(), kLimits);
  REQUIRE(v.ok());
  CHECK(v->request_id == "req-1");
  CHECK(v->prompt == std::vector<std::int32_t>{1, 999});
  CHECK(v->max_new_tokens == 8);
  CHECK(v->stop_token_ids == std::vector<std::int32_t>{2});
  CHECK_FALSE(v->ignore_eos);
  CHECK(v->sampling.temperature == 1.0f);
  CHECK(v->sampling.top_p == 1.0f);
  CHECK_FALSE(v->sampling.seed.has_value());
}

TEST_CASE("set sampling fields override defaults, zero included") {
  v1::GenerateRequest r = valid_request();
  r.mutable_sampling()->set_temperature(0.0f);
  r.mutable_sampling()->set_top_k(5);
  r.mutable_sampling()->set_top_p(0.9f);
  r.mutable_sampling()->set_min_p(0.1f);
  r.mutable_sampling()->set_repetition_penalty(1.2f);
  r.mutable_sampling()->set_frequency_penalty(-0.5f);
  r.mutable_sampling()->set_presence_penalty(0.5f);
  r.mutable_sampling()->set_seed(0);
  r.mutable_stopping()->set_ignore_eos(true);
  StatusOr<ValidatedRequest> const v = validate_generate_request(r, kLimits);
  REQUIRE(v.ok());
  CHECK(v->sampling.temperature == 0.0f);
  CHECK(v->sampling.top_k == 5);
  CHECK(v->sampling.top_p == 0.9f);
  CHECK(v->sampling.min_p == 0.1f);
  CHECK(v->sampling.repetition_penalty == 1.2f);
  CHECK(v->sampling.frequency_penalty == -0.5f);
  CHECK(v->sampling.presence_penalty == 0.5f);
  REQUIRE(v->sampling.seed.has_value());
  CHECK(*v->sampling.seed == 0u);
  CHECK(v->ignore_eos);
}

TEST_CASE("boundary requests are accepted") {
  v1::GenerateRequest r = valid_request();
  r.set_request_id(std::string(kMaxRequestIdBytes, 'x'));
  r.mutable_stopping()->set_max_new_tokens(62);  // 2 + 62 = the whole context
  for (std::size_t i = 1; i < kMaxStopTokenIds; ++i) {
    r.mutable_stopping()->add_stop_token_ids(999);
  }
  CHECK(validate_generate_request(r, kLimits).ok());
  r.clear_request_id();  // the server assigns one
  CHECK(validate_generate_request(r, kLimits).ok());
}

TEST_CASE("malformed requests are INVALID_ARGUMENT naming the problem") {
  float const nan = std::numeric_limits<float>::quiet_NaN();
  float const inf = std::numeric_limits<float>::infinity();
  std::vector<Malformed> const cases = {
      {"empty prompt", [](auto& r) { r.clear_prompt_token_ids(); }, "prompt_token_ids is empty"},
      {"prompt token = vocab", [](auto& r) { r.add_prompt_token_ids(1000); },
       "prompt_token_ids[2] = 1000"},
      {"prompt token far out", [](auto& r) { r.set_prompt_token_ids(0, 0xffffffffu); },
       "prompt_token_ids[0]"},
      {"no stopping", [](auto& r) { r.clear_stopping(); }, "stopping is missing"},
      {"max_new_tokens 0", [](auto& r) { r.mutable_stopping()->set_max_new_tokens(0); },
       "max_new_tokens must be > 0"},
      {"prompt + max_new over context",
       [](auto& r) { r.mutable_stopping()->set_max_new_tokens(63); },
       "exceeds the model's context"},
      {"huge max_new_tokens",
       [](auto& r) { r.mutable_stopping()->set_max_new_tokens(0xffffffffu); }, "context of 64"},
      {"prompt alone over context",
       [](auto& r) {
         for (int i = 0; i < 70; ++i) {
           r.add_prompt_token_ids(3);
         }
       },
       "exceeds the model's context"},
      {"stop token = vocab", [](auto& r) { r.mutable_stopping()->add_stop_token_ids(1000); },
       "stopping.stop_token_ids[1] = 1000"},
      {"too many stop tokens",
       [](auto& r) {
         for (std::size_t i = 0; i < kMaxStopTokenIds; ++i) {
           r.mutable_stopping()->add_stop_token_ids(1);
         }
       },
       "stop_token_ids has 65 entries"},
      {"request id too long",
       [](auto& r) { r.set_request_id(std::string(kMaxRequestIdBytes + 1, 'a')); },
       "request_id is 129 bytes"},
      {"request id with a space", [](auto& r) { r.set_request_id("a b"); }, "request_id byte 1"},
      {"request id with a newline", [](auto& r) { r.set_request_id("ab\n"); }, "request_id byte 2"},
      {"request id not ASCII", [](auto& r) { r.set_request_id("caf\xc3\xa9"); },
       "request_id byte 3"},
      {"negative temperature", [](auto& r) { r.mutable_sampling()->set_temperature(-1.0f); },
       "sampling: temperature"},
      {"NaN temperature", [&](auto& r) { r.mutable_sampling()->set_temperature(nan); },
       "sampling: temperature"},
      {"infinite temperature", [&](auto& r) { r.mutable_sampling()->set_temperature(inf); },
       "sampling: temperature"},
      {"negative top_k", [](auto& r) { r.mutable_sampling()->set_top_k(-1); }, "sampling: top_k"},
      {"top_p 0", [](auto& r) { r.mutable_sampling()->set_top_p(0.0f); }, "sampling: top_p"},
      {"top_p above 1", [](auto& r) { r.mutable_sampling()->set_top_p(1.5f); }, "sampling: top_p"},
      {"min_p negative", [](auto& r) { r.mutable_sampling()->set_min_p(-0.1f); },
       "sampling: min_p"},
      {"min_p above 1", [](auto& r) { r.mutable_sampling()->set_min_p(2.0f); }, "sampling: min_p"},
      {"repetition_penalty 0", [](auto& r) { r.mutable_sampling()->set_repetition_penalty(0.0f); },
       "sampling: repetition_penalty"},
      {"repetition_penalty negative",
       [](auto& r) { r.mutable_sampling()->set_repetition_penalty(-1.0f); },
       "sampling: repetition_penalty"},
      {"frequency_penalty above 2",
       [](auto& r) { r.mutable_sampling()->set_frequency_penalty(2.5f); },
       "sampling: frequency_penalty"},
      {"presence_penalty below -2",
       [](auto& r) { r.mutable_sampling()->set_presence_penalty(-3.0f); },
       "sampling: presence_penalty"},
      {"NaN presence_penalty", [&](auto& r) { r.mutable_sampling()->set_presence_penalty(nan); },
       "sampling: presence_penalty"},
  };
  REQUIRE(cases.size() >= 20);
  for (Malformed const& c : cases) {
    v1::GenerateRequest r = valid_request();
    c.mutate(r);
    Status const status = validate_generate_request(r, kLimits).status();
    INFO(c.what << " -> " << status.to_string());
    CHECK(status.code() == StatusCode::kInvalidArgument);
    CHECK(status.message().find(c.names) != std::string::npos);
  }
}

TEST_CASE("the shape checks need no model; the model checks need the limits") {
  v1::GenerateRequest r = valid_request();
  r.add_prompt_token_ids(5000);  // fine without a vocabulary to compare to
  CHECK(validate_request_shape(r).ok());
  CHECK(validate_generate_request(r, kLimits).status().code() == StatusCode::kInvalidArgument);
  r.clear_prompt_token_ids();
  CHECK(validate_request_shape(r).code() == StatusCode::kInvalidArgument);
  // Unset limits are a server bug, not the client's.
  CHECK(validate_generate_request(valid_request(), {}).status().code() == StatusCode::kInternal);
}

}  // namespace
}  // namespace gcmoe::frontend
