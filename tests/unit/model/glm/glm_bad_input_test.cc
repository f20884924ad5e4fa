// Bad step inputs are INVALID_ARGUMENT naming the problem, never a crash or a silent wrong answer;
// and the model keeps working afterwards.

#include <filesystem>
#include <string>

#include "engine/model/step_model_factory.h"
#include "engine/runtime/single_rank_communicator.h"
#include "tests/support/catch.h"
#include "tests/unit/model/glm/glm_test_support.h"

namespace gcmoe::testing::glm {
namespace {

Status step_one(runtime::StepModel& model, scheduler::BatchEntry const entry,
                std::vector<std::uint32_t> const& ids, std::vector<std::int32_t> const& table) {
  std::vector<scheduler::BatchEntry> const entries = {entry};
  std::vector<std::span<std::int32_t const>> const tables = {table};
  std::vector<float> logits;
  return model.step({entries, ids, tables}, logits);
}

void expect_invalid(Status const& status, std::string const& words) {
  INFO(status.message());
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK(status.message().find(words) != std::string::npos);
}

TEST_CASE("bad step inputs are INVALID_ARGUMENT", "[glm][errors]") {
  runtime::SingleRankCommunicator comm;
  auto const model = load_fixture_model(comm, 64);
  auto const vocab = static_cast<std::uint32_t>(model->info().vocab_size);
  std::int32_t const max_context = model->info().max_context;
  std::vector<std::int32_t> const table = {3, 9};  // positions [0, 8)
  scheduler::BatchEntry const prefill{
      .id = 1, .start_position = 0, .num_tokens = 3, .is_prefill = true, .samples_token = true};

  SECTION("token id at or past the vocabulary") {
    expect_invalid(step_one(*model, prefill, {1, vocab, 2}, table), "outside the vocabulary");
    expect_invalid(step_one(*model, prefill, {1, 0xffffffffu, 2}, table), "outside the vocabulary");
  }
  SECTION("position past max_context") {
    std::vector<std::int32_t> const big(static_cast<std::size_t>(max_context / kBlockSize + 1), 0);
    scheduler::BatchEntry decode{.id = 1, .start_position = max_context, .num_tokens = 1};
    expect_invalid(step_one(*model, decode, {1}, big), "past the model's context");
    decode.start_position = -1;
    expect_invalid(step_one(*model, decode, {1}, big), "starts at position -1");
  }
  SECTION("block table too short or naming a block outside the cache") {
    scheduler::BatchEntry const long_prefill{.id = 1, .start_position = 0, .num_tokens = 9};
    expect_invalid(step_one(*model, long_prefill, std::vector<std::uint32_t>(9, 1), table),
                   "block table has 2");
    expect_invalid(step_one(*model, prefill, {1, 2, 3}, {kKvBlocks}), "outside the");
    expect_invalid(step_one(*model, prefill, {1, 2, 3}, {}), "block table has 0");
  }
  SECTION("sizes that disagree") {
    expect_invalid(step_one(*model, prefill, {1, 2}, table), "2 token ids");
    std::vector<scheduler::BatchEntry> const entries = {prefill};
    std::vector<std::uint32_t> const ids = {1, 2, 3};
    std::vector<float> logits;
    expect_invalid(model->step({entries, ids, {}}, logits), "block tables");
    scheduler::BatchEntry empty = prefill;
    empty.num_tokens = 0;
    expect_invalid(step_one(*model, empty, {}, table), "has 0 tokens");
    scheduler::BatchEntry const huge{.id = 1, .start_position = 0, .num_tokens = 65};
    expect_invalid(
        step_one(*model, huge, std::vector<std::uint32_t>(65, 1), std::vector<std::int32_t>(17, 0)),
        "max_batch_tokens");
  }
  // Still serves after the errors.
  std::vector<float> logits;
  std::vector<scheduler::BatchEntry> const entries = {prefill};
  std::vector<std::uint32_t> const ids = {1, 2, 3};
  std::vector<std::span<std::int32_t const>> const tables = {table};
  REQUIRE(model->step({entries, ids, tables}, logits).ok());
  CHECK(logits.size() == static_cast<std::size_t>(vocab));
}

}  // namespace
}  // namespace gcmoe::testing::glm

namespace gcmoe::testing::glm {
namespace {

StatusCode load_code(std::filesystem::path const& dir, model::StepBackend backend,
                     std::string& message) {
  runtime::SingleRankCommunicator comm;
  model::StepModelOptions options;
  options.model_dir = dir;
  options.backend = backend;
  auto const loaded = model::load_step_model(options, comm);
  message = loaded.status().message();
  return loaded.status().code();
}

TEST_CASE("load_step_model errors name the problem", "[glm][errors]") {
  std::filesystem::path const configs = std::filesystem::path(GCMOE_SOURCE_DIR) / "configs/models";
  std::string message;
  CHECK(load_code(configs / "no-such-model", model::StepBackend::kCpu, message) ==
        StatusCode::kNotFound);
  CHECK(load_code(configs / "deepseek-v4-flash", model::StepBackend::kCpu, message) ==
        StatusCode::kUnimplemented);
  CHECK(load_code(fixture_dir(), model::StepBackend::kCuda, message) == StatusCode::kUnimplemented);
  // The real GLM-5.2 (config only here) would need terabytes of fp32 weights: refused up front.
  CHECK(load_code(configs / "glm-5.2", model::StepBackend::kCpu, message) ==
        StatusCode::kResourceExhausted);
  INFO(message);
  CHECK(message.find("GB of host memory") != std::string::npos);
}

}  // namespace
}  // namespace gcmoe::testing::glm
