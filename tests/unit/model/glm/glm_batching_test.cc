// The step model's batching contract: a sequence's logits do not depend on how its positions are
// split into steps (prefill then decode, chunked prefill) nor on which other sequences share the
// step. Compared within fp32 rounding (different GEMM row counts never change the per-row math,
// so these should be bit-identical; the bound only guards against reordering).

#include <fmt/format.h>

#include <algorithm>

#include "engine/runtime/single_rank_communicator.h"
#include "tests/support/catch.h"
#include "tests/unit/model/glm/glm_test_support.h"

namespace gcmoe::testing::glm {
namespace {

constexpr double kSameMaxAbs = 1e-5;

std::vector<std::uint32_t> tokens_of(std::size_t n, std::uint32_t seed) {
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back((seed * 131 + static_cast<std::uint32_t>(i) * 37 + 11) % 380);
  }
  return out;
}

TEST_CASE("prefill then decode equals one long prefill", "[glm][batching]") {
  runtime::SingleRankCommunicator comm;
  auto const model = load_fixture_model(comm);
  std::vector<std::uint32_t> const prompt = tokens_of(20, 3);
  Driver stepwise(*model);
  Generation const gen = generate(stepwise, prompt, 16);

  // Prefill prompt + the first 15 generated tokens at once: its last row predicts token 16.
  std::vector<std::uint32_t> all = prompt;
  all.insert(all.end(), gen.tokens.begin(), gen.tokens.end() - 1);
  Driver once(*model);
  std::int32_t const seq = once.add_sequence(static_cast<std::int32_t>(all.size()));
  std::vector<float> logits;
  REQUIRE(once.step({{.seq = seq, .tokens = all}}, logits).ok());
  double const err = max_abs_error(logits, gen.logits.at(15));
  fmt::print("glm prefill-vs-decode: {} positions, max abs {:.3g}\n", all.size(), err);
  CHECK(err <= kSameMaxAbs);
}

TEST_CASE("chunked prefill equals a full prefill", "[glm][batching]") {
  runtime::SingleRankCommunicator comm;
  auto const model = load_fixture_model(comm);
  std::vector<std::uint32_t> const prompt = tokens_of(37, 5);  // > index_topk 16
  Driver full_driver(*model);
  Generation const full = generate(full_driver, prompt, 8);
  for (std::int32_t const chunk : {1, 5, 16}) {
    Driver chunked_driver(*model);
    Generation const chunked = generate(chunked_driver, prompt, 8, chunk);
    CHECK(chunked.tokens == full.tokens);
    double worst = 0.0;
    for (auto const& [step, logits] : full.logits) {
      worst = std::max(worst, max_abs_error(chunked.logits.at(step), logits));
    }
    fmt::print("glm chunked prefill: chunk {:2d}, max abs {:.3g}\n", chunk, worst);
    CHECK(worst <= kSameMaxAbs);
  }
}

TEST_CASE("a mixed batch of sequences equals each run alone", "[glm][batching]") {
  runtime::SingleRankCommunicator comm;
  auto const model = load_fixture_model(comm);
  std::vector<std::vector<std::uint32_t>> const prompts = {tokens_of(3, 1), tokens_of(30, 2),
                                                           tokens_of(11, 4)};
  constexpr std::int32_t kSteps = 12;
  std::vector<Generation> alone;
  for (auto const& prompt : prompts) {
    Driver driver(*model);
    alone.push_back(generate(driver, prompt, kSteps));
  }

  // Staggered: sequence 0 prefills alone; then 0 decodes while 1 prefills in two chunks (the
  // first chunk samples nothing) and 2 prefills whole; then all three decode together.
  Driver driver(*model, kKvBlocks, kBlockSize, 7);
  std::vector<std::int32_t> seqs;
  for (auto const& prompt : prompts) {
    seqs.push_back(driver.add_sequence(static_cast<std::int32_t>(prompt.size()) + kSteps));
  }
  std::vector<std::vector<std::uint32_t>> got(prompts.size());
  std::vector<double> worst(prompts.size(), 0.0);
  auto const take = [&](std::size_t p, std::span<float const> row) {
    std::int32_t const step = static_cast<std::int32_t>(got[p].size());
    worst[p] = std::max(worst[p], max_abs_error(row, alone[p].logits.at(step)));
    got[p].push_back(argmax(row));
  };
  std::size_t const vocab = static_cast<std::size_t>(model->info().vocab_size);
  std::vector<float> logits;
  REQUIRE(driver.step({{.seq = seqs[0], .tokens = prompts[0]}}, logits).ok());
  take(0, logits);
  std::vector<std::uint32_t> const first(prompts[1].begin(), prompts[1].begin() + 17);
  std::vector<std::uint32_t> const rest(prompts[1].begin() + 17, prompts[1].end());
  REQUIRE(driver
              .step({{.seq = seqs[0], .tokens = {got[0].back()}},
                     {.seq = seqs[1], .tokens = first, .samples = false},
                     {.seq = seqs[2], .tokens = prompts[2]}},
                    logits)
              .ok());
  REQUIRE(logits.size() == 2 * vocab);
  take(0, std::span<float const>(logits).subspan(0, vocab));
  take(2, std::span<float const>(logits).subspan(vocab, vocab));
  REQUIRE(driver
              .step({{.seq = seqs[0], .tokens = {got[0].back()}},
                     {.seq = seqs[2], .tokens = {got[2].back()}},
                     {.seq = seqs[1], .tokens = rest}},
                    logits)
              .ok());
  take(0, std::span<float const>(logits).subspan(0, vocab));
  take(2, std::span<float const>(logits).subspan(vocab, vocab));
  take(1, std::span<float const>(logits).subspan(2 * vocab, vocab));
  auto const unfinished = [&] {
    return std::any_of(got.begin(), got.end(),
                       [](auto const& g) { return g.size() < static_cast<std::size_t>(kSteps); });
  };
  while (unfinished()) {
    std::vector<Driver::Work> work;
    std::vector<std::size_t> order;
    for (std::size_t p = 0; p < prompts.size(); ++p) {
      if (got[p].size() < static_cast<std::size_t>(kSteps)) {
        work.push_back({.seq = seqs[p], .tokens = {got[p].back()}});
        order.push_back(p);
      }
    }
    REQUIRE(driver.step(work, logits).ok());
    for (std::size_t i = 0; i < order.size(); ++i) {
      take(order[i], std::span<float const>(logits).subspan(i * vocab, vocab));
    }
  }
  for (std::size_t p = 0; p < prompts.size(); ++p) {
    fmt::print("glm mixed batch: sequence {} ({:2d} prompt tokens), max abs {:.3g}\n", p,
               prompts[p].size(), worst[p]);
    CHECK(got[p] == alone[p].tokens);
    CHECK(worst[p] <= kSameMaxAbs);
  }
}

}  // namespace
}  // namespace gcmoe::testing::glm
