#include "engine/sampling/penalties.h"

#include <vector>

#include "tests/support/catch.h"

namespace gcmoe::sampling {
namespace {

TEST_CASE("repetition penalty divides positive and multiplies negative seen logits once") {
  std::vector<float> logits = {2.0f, -1.0f, 3.0f, 4.0f, -2.0f};
  std::vector<std::int32_t> const prompt = {0, 0, 1};
  std::vector<std::int32_t> const output = {1, 4, 4};
  SamplingParams params;
  params.repetition_penalty = 2.0f;
  REQUIRE(apply_penalties(logits, params, {prompt, output}).ok());
  // Seen: 0 (prompt twice), 1 (prompt and output), 4 (output twice): penalized exactly once each.
  CHECK(logits == std::vector<float>{1.0f, -2.0f, 3.0f, 4.0f, -4.0f});
}

TEST_CASE("frequency and presence penalties count output tokens only") {
  std::vector<float> logits = {1.0f, 1.0f, 1.0f, 1.0f};
  std::vector<std::int32_t> const prompt = {0, 0, 0};
  std::vector<std::int32_t> const output = {1, 2, 2, 2};
  SamplingParams params;
  params.frequency_penalty = 0.5f;
  params.presence_penalty = 0.25f;
  REQUIRE(apply_penalties(logits, params, {prompt, output}).ok());
  CHECK(logits[0] == Approx(1.0));                   // prompt only: untouched
  CHECK(logits[1] == Approx(1.0 - 0.5 * 1 - 0.25));  // once in output
  CHECK(logits[2] == Approx(1.0 - 0.5 * 3 - 0.25));  // three times in output
  CHECK(logits[3] == Approx(1.0));                   // never seen
}

TEST_CASE("negative additive penalties encourage repetition") {
  std::vector<float> logits = {0.0f, 0.0f};
  std::vector<std::int32_t> const output = {1, 1};
  SamplingParams params;
  params.frequency_penalty = -1.0f;
  REQUIRE(apply_penalties(logits, params, {{}, output}).ok());
  CHECK(logits[1] == Approx(2.0));
  CHECK(logits[0] == Approx(0.0));
}

TEST_CASE("all three penalties compose: repetition first, then additive") {
  std::vector<float> logits = {4.0f};
  std::vector<std::int32_t> const output = {0, 0};
  SamplingParams params;
  params.repetition_penalty = 2.0f;
  params.frequency_penalty = 1.0f;
  params.presence_penalty = 0.5f;
  REQUIRE(apply_penalties(logits, params, {{}, output}).ok());
  CHECK(logits[0] == Approx(4.0 / 2.0 - 2.0 - 0.5));
}

TEST_CASE("default params leave logits untouched and history is checked against the vocab") {
  std::vector<float> logits = {0.5f, -0.5f};
  std::vector<std::int32_t> const history = {0, 1, 1};
  REQUIRE(apply_penalties(logits, {}, {history, history}).ok());
  CHECK(logits == std::vector<float>{0.5f, -0.5f});

  std::vector<std::int32_t> const bad = {2};
  CHECK(apply_penalties(logits, {}, {bad, {}}).code() == StatusCode::kInvalidArgument);
  std::vector<std::int32_t> const negative = {-1};
  CHECK(apply_penalties(logits, {}, {{}, negative}).code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gcmoe::sampling
