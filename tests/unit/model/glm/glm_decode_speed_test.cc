// CPU decode speed of the tiny GLM-5.2 models (single thread; the CPU step has no threading):
// decoded tokens per CPU second (and per wall second) at batch 1 and batch 8. Hidden from the
// default run (timing is not a pass/fail property); run with: unit_model_glm "[speed]"

#include <fmt/format.h>
#include <time.h>

#include <chrono>
#include <filesystem>

#include "engine/model/step_model_factory.h"
#include "engine/runtime/single_rank_communicator.h"
#include "engine/tiny/ensure_tiny_model.h"
#include "tests/support/catch.h"
#include "tests/unit/model/glm/glm_test_support.h"

namespace gcmoe::testing::glm {
namespace {

constexpr std::int32_t kPrompt = 32;
constexpr std::int32_t kDecodeSteps = 64;

// CPU time of this thread: on a shared machine wall time mostly measures the neighbours.
double thread_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

void measure(std::string const& name, std::filesystem::path const& dir) {
  runtime::SingleRankCommunicator comm;
  model::StepModelOptions options;
  options.model_dir = dir;
  options.kv_blocks = 256;
  options.kv_block_size = 16;
  auto loaded = model::load_step_model(options, comm);
  INFO(loaded.status().message());
  REQUIRE(loaded.ok());
  runtime::StepModel& model = **loaded;
  auto const vocab = static_cast<std::size_t>(model.info().vocab_size);
  for (std::int32_t const batch : {1, 8}) {
    Driver driver(model, options.kv_blocks, options.kv_block_size);
    std::vector<Driver::Work> work;
    for (std::int32_t b = 0; b < batch; ++b) {
      std::vector<std::uint32_t> prompt;
      for (std::int32_t t = 0; t < kPrompt; ++t) {
        prompt.push_back(static_cast<std::uint32_t>((b * 97 + t * 13 + 1) % 300));
      }
      work.push_back({.seq = driver.add_sequence(kPrompt + kDecodeSteps + 1), .tokens = prompt});
    }
    std::vector<float> logits;
    REQUIRE(driver.step(work, logits).ok());
    double const cpu_start = thread_cpu_seconds();
    auto const start = std::chrono::steady_clock::now();
    for (std::int32_t s = 0; s < kDecodeSteps; ++s) {
      for (std::size_t b = 0; b < work.size(); ++b) {
        work[b].tokens = {argmax(std::span<float const>(logits).subspan(b * vocab, vocab))};
      }
      REQUIRE(driver.step(work, logits).ok());
    }
    double const seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double const cpu = thread_cpu_seconds() - cpu_start;
    fmt::print(
        "glm decode speed: {} batch {}: {:.0f} tokens/s per CPU second ({:.2f} ms CPU per "
        "step; wall {:.0f} tokens/s), {} steps after a {}-token prompt\n",
        name, batch, batch * kDecodeSteps / cpu, 1e3 * cpu / kDecodeSteps,
        batch * kDecodeSteps / seconds, kDecodeSteps, kPrompt);
  }
}

TEST_CASE("decode speed of the tiny GLM-5.2 models", "[.][speed]") {
  measure("golden fixture (hidden 144, 5 layers)", fixture_dir());
  std::filesystem::path const dir =
      std::filesystem::temp_directory_path() / fmt::format("gcmoe-glm-speed-{}", ::getpid());
  auto const made =
      tiny::ensure_tiny_model(GCMOE_TINY_DEFAULT_CONFIG, dir, tiny::kEmbeddedDefaultSeed);
  REQUIRE(made.ok());
  measure("embedded default tiny-glm-5.2 (hidden 256, 4 layers)", *made);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gcmoe::testing::glm
