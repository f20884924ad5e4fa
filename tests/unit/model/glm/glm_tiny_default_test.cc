// The embedded default model (configs/models/tiny-glm-5.2, weights made by engine/tiny on first
// use) through load_step_model on one and on two ranks: the loader path `gcmoe serve` takes.

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <thread>

#include "engine/model/step_model_factory.h"
#include "engine/runtime/single_rank_communicator.h"
#include "engine/tiny/ensure_tiny_model.h"
#include "tests/support/catch.h"
#include "tests/unit/model/glm/glm_test_support.h"
#include "tests/unit/model/glm/thread_communicator.h"

namespace gcmoe::testing::glm {
namespace {

std::filesystem::path tiny_dir() {
  std::filesystem::path const dir =
      std::filesystem::temp_directory_path() / fmt::format("gcmoe-glm-tiny-{}", ::getpid());
  auto const made =
      tiny::ensure_tiny_model(GCMOE_TINY_DEFAULT_CONFIG, dir, tiny::kEmbeddedDefaultSeed);
  INFO(made.status().message());
  REQUIRE(made.ok());
  return *made;
}

std::unique_ptr<runtime::StepModel> load(std::filesystem::path const& dir,
                                         runtime::Communicator& comm) {
  model::StepModelOptions options;
  options.model_dir = dir;
  options.kv_blocks = 32;
  options.kv_block_size = 16;
  auto loaded = model::load_step_model(options, comm);
  INFO(loaded.status().message());
  REQUIRE(loaded.ok());
  return std::move(loaded).value();
}

std::vector<std::uint32_t> decode(runtime::StepModel& model, std::int32_t steps) {
  Driver driver(model, 32, 16);
  std::vector<std::uint32_t> const prompt = {1, 2, 3, 500, 77, 900, 4, 8};
  Generation const gen = generate(driver, prompt, steps);
  for (auto const& [step, logits] : gen.logits) {
    for (float const v : logits) {
      REQUIRE(std::isfinite(v));
    }
  }
  return gen.tokens;
}

TEST_CASE("the embedded default tiny GLM-5.2 loads and decodes", "[glm][tiny]") {
  std::filesystem::path const dir = tiny_dir();
  runtime::SingleRankCommunicator single;
  auto const model = load(dir, single);
  runtime::StepModelInfo const& info = model->info();
  CHECK(info.family == "glm_moe_dsa");
  CHECK(info.vocab_size == 1024);
  CHECK(info.max_context == 8192);
  CHECK(info.eos_token_ids == std::vector<std::uint32_t>{1000, 1007, 1009});
  CHECK(info.kv_bytes_per_token > 0);
  std::vector<std::uint32_t> const one_rank = decode(*model, 6);
  fmt::print("glm tiny default: tokens {}\n", fmt::join(one_rank, " "));

  // Two ranks on a busy sequence each: rank 0's output is the one-rank output.
  ThreadGroup group(2);
  ThreadCommunicator comm0(group, 0);
  ThreadCommunicator comm1(group, 1);
  auto const model0 = load(dir, comm0);
  auto const model1 = load(dir, comm1);
  std::vector<std::uint32_t> rank1_tokens;
  std::thread other([&] { rank1_tokens = decode(*model1, 6); });
  std::vector<std::uint32_t> const rank0_tokens = decode(*model0, 6);
  other.join();
  CHECK(rank0_tokens == one_rank);
  CHECK(rank1_tokens == one_rank);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gcmoe::testing::glm
