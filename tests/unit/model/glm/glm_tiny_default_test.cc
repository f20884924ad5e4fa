// The embedded default model (configs/models/tiny-glm-5.2, weights made by engine/tiny on first
// use) through load_step_model on one and on two ranks: the loader path `gcmoe serve` takes.

#include <fmt/format.h>

#include <algorithm>
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

struct Decoded {
  Status status;
  std::vector<std::uint32_t> tokens;
  std::int64_t non_finite = 0;  // logits that are NaN or infinite, over every step
};

// Greedy decode of one prompt. No Catch2 macros: rank 1 runs it on its own thread
// (glm_test_support.h); check() the result on the test's thread.
Decoded decode(runtime::StepModel& model, std::int32_t steps) {
  Driver driver(model, 32, 16);
  std::vector<std::uint32_t> const prompt = {1, 2, 3, 500, 77, 900, 4, 8};
  Generation gen;
  Decoded out;
  out.status = try_generate(driver, prompt, steps, gen);
  for (auto const& [step, logits] : gen.logits) {
    out.non_finite += std::count_if(logits.begin(), logits.end(),
                                    [](float const v) { return !std::isfinite(v); });
  }
  out.tokens = std::move(gen.tokens);
  return out;
}

void check(Decoded const& decoded) {
  INFO(decoded.status.message());
  REQUIRE(decoded.status.ok());
  CHECK(decoded.non_finite == 0);
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
  Decoded const single_decode = decode(*model, 6);
  check(single_decode);
  std::vector<std::uint32_t> const& one_rank = single_decode.tokens;
  fmt::print("glm tiny default: tokens {}\n", fmt::join(one_rank, " "));

  // Two ranks on a busy sequence each: rank 0's output is the one-rank output.
  ThreadGroup group(2);
  ThreadCommunicator comm0(group, 0);
  ThreadCommunicator comm1(group, 1);
  auto const model0 = load(dir, comm0);
  auto const model1 = load(dir, comm1);
  Decoded rank1;
  std::thread other([&] { rank1 = decode(*model1, 6); });
  Decoded const rank0 = decode(*model0, 6);
  other.join();
  check(rank0);
  check(rank1);
  CHECK(rank0.tokens == one_rank);
  CHECK(rank1.tokens == one_rank);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gcmoe::testing::glm
