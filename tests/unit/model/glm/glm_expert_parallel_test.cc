// Expert parallelism: two ranks (threads, each with its own model holding half of every MoE
// layer's experts) decode different sequences in lockstep — rank 1 runs out of work first and
// keeps joining with empty batches — and each must match the same sequence on one rank.

#include <fmt/format.h>

#include <chrono>
#include <thread>

#include "engine/runtime/single_rank_communicator.h"
#include "tests/support/catch.h"
#include "tests/unit/model/glm/glm_test_support.h"
#include "tests/unit/model/glm/thread_communicator.h"

namespace gcmoe::testing::glm {
namespace {

// The two ranks sum each token's expert outputs in another order than one rank does.
constexpr double kEpMaxAbs = 2e-5;

struct RankRun {
  std::vector<std::uint32_t> tokens;
  std::vector<std::vector<float>> logits;
  Status status;
};

// Prefill `prompt` then decode to `steps` tokens, then keep stepping with empty batches until
// `total_steps` steps have run (the other rank may still be busy). Runs on a rank's thread: no
// Catch2 macros (glm_test_support.h), the test checks `out` after join().
void run_rank(runtime::StepModel& model, std::vector<std::uint32_t> const& prompt,
              std::int32_t const steps, std::int32_t const total_steps, RankRun& out) {
  Driver driver(model);
  StatusOr<std::int32_t> const added =
      driver.try_add_sequence(static_cast<std::int32_t>(prompt.size()) + steps);
  if (!added.ok()) {
    out.status = added.status();
    return;
  }
  std::int32_t const seq = *added;
  std::vector<float> logits;
  for (std::int32_t s = 0; s < total_steps; ++s) {
    std::vector<Driver::Work> work;
    if (s == 0) {
      work.push_back({.seq = seq, .tokens = prompt});
    } else if (static_cast<std::int32_t>(out.tokens.size()) < steps) {
      work.push_back({.seq = seq, .tokens = {out.tokens.back()}});
    }
    out.status = driver.step(work, logits);
    if (!out.status.ok()) {
      return;
    }
    if (!work.empty()) {
      out.logits.push_back(logits);
      out.tokens.push_back(argmax(logits));
    } else if (!logits.empty()) {
      out.status = internal_error("an empty batch returned logits");
      return;
    }
  }
}

TEST_CASE("expert parallel over 2 ranks equals 1 rank", "[glm][ep]") {
  std::vector<std::vector<std::uint32_t>> const prompts = {
      {5, 17, 200, 33, 90, 4, 250, 61, 12, 77, 300, 8, 140, 2, 99, 45, 310, 18, 64, 23},
      {42, 7, 365}};
  std::vector<std::int32_t> const steps = {20, 9};

  runtime::SingleRankCommunicator single;
  auto const reference_model = load_fixture_model(single);
  std::vector<Generation> reference;
  for (std::size_t r = 0; r < prompts.size(); ++r) {
    Driver driver(*reference_model);
    reference.push_back(generate(driver, prompts[r], steps[r]));
  }

  ThreadGroup group(2);
  ThreadCommunicator comm0(group, 0);
  ThreadCommunicator comm1(group, 1);
  std::unique_ptr<runtime::StepModel> model0;
  std::unique_ptr<runtime::StepModel> model1;
  // Each rank loads its own expert slice (the loader checks nothing collective).
  model0 = load_fixture_model(comm0);
  model1 = load_fixture_model(comm1);
  std::vector<RankRun> runs(2);
  std::thread rank1([&] { run_rank(*model1, prompts[1], steps[1], steps[0], runs[1]); });
  run_rank(*model0, prompts[0], steps[0], steps[0], runs[0]);
  rank1.join();
  for (std::size_t r = 0; r < 2; ++r) {
    INFO(runs[r].status.message());
    REQUIRE(runs[r].status.ok());
    CHECK(runs[r].tokens == reference[r].tokens);
    double worst = 0.0;
    for (std::size_t s = 0; s < runs[r].logits.size(); ++s) {
      worst = std::max(worst, max_abs_error(runs[r].logits[s],
                                            reference[r].logits.at(static_cast<std::int32_t>(s))));
    }
    fmt::print("glm expert parallel: rank {} of 2, {} steps, max abs vs 1 rank {:.3g}\n", r,
               runs[r].logits.size(), worst);
    CHECK(worst <= kEpMaxAbs);
  }
}

TEST_CASE("a rank with a bad batch still joins the MoE exchanges", "[glm][ep][errors]") {
  std::vector<std::uint32_t> const prompt = {9, 8, 7, 6, 5};
  runtime::SingleRankCommunicator single;
  auto const reference_model = load_fixture_model(single);
  Driver reference_driver(*reference_model);
  Generation const reference = generate(reference_driver, prompt, 1);

  // A short deadline: a rank that failed to join would end rank 0's step with DEADLINE_EXCEEDED.
  ThreadGroup group(2, std::chrono::seconds(5));
  ThreadCommunicator comm0(group, 0);
  ThreadCommunicator comm1(group, 1);
  auto const model0 = load_fixture_model(comm0);
  auto const model1 = load_fixture_model(comm1);
  // Rank 1's sequence is added here: its thread uses no Catch2 macros (glm_test_support.h).
  Driver driver1(*model1);
  std::int32_t const seq1 = driver1.add_sequence(4);
  Status bad;
  std::thread rank1([&] {
    std::vector<float> logits;
    bad = driver1.step({{.seq = seq1, .tokens = {1, 100000}}}, logits);
  });
  Driver driver(*model0);
  std::int32_t const seq = driver.add_sequence(8);
  std::vector<float> logits;
  Status const good = driver.step({{.seq = seq, .tokens = prompt}}, logits);
  rank1.join();
  INFO(good.message());
  REQUIRE(good.ok());
  CHECK(max_abs_error(logits, reference.logits.at(0)) <= kEpMaxAbs);
  CHECK(bad.code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gcmoe::testing::glm
