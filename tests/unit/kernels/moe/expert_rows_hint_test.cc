// The expert GEMM's rows-per-expert hint (kernels/moe/expert_rows_hint.h).
#include "kernels/moe/expert_rows_hint.h"

#include <algorithm>
#include <random>
#include <vector>

#include "tests/support/catch.h"

namespace gcmoe::kernels {
namespace {

TEST_CASE("rows hint stays within 1..T and grows with the load") {
  CHECK(routed_rows_hint(0, 8, 256) == 0);
  CHECK(routed_rows_hint(1, 8, 256) == 1);
  // GLM-5.2 on one GPU: decode batches up to 64 tokens stay on the 8-row configuration.
  CHECK(routed_rows_hint(16, 8, 256) <= 8);
  CHECK(routed_rows_hint(64, 8, 256) <= 8);
  // Wide batches move to wider passes.
  CHECK(routed_rows_hint(256, 8, 256) > 8);
  // A single expert takes every token.
  CHECK(routed_rows_hint(37, 1, 1) == 37);
  int previous = 0;
  for (int t = 1; t <= 4096; t *= 2) {
    int const hint = routed_rows_hint(t, 6, 384);
    CHECK(hint >= previous);
    CHECK(hint >= 1);
    CHECK(hint <= t);
    previous = hint;
  }
}

TEST_CASE("rows hint covers nearly every expert of a balanced random routing") {
  // Uniform top-k routing (the balanced case the hint assumes): count how many experts exceed it.
  std::mt19937_64 rng(5);
  for (int const tokens : {16, 64, 256}) {
    int constexpr kExperts = 256;
    int constexpr kTopK = 8;
    int over = 0;
    int constexpr kTrials = 20;
    for (int trial = 0; trial < kTrials; ++trial) {
      std::vector<int> rows(kExperts, 0);
      for (int t = 0; t < tokens; ++t) {
        std::vector<int> picked;
        while (static_cast<int>(picked.size()) < kTopK) {
          int const e = static_cast<int>(rng() % kExperts);
          if (std::find(picked.begin(), picked.end(), e) == picked.end()) {
            picked.push_back(e);
            ++rows[static_cast<std::size_t>(e)];
          }
        }
      }
      int const hint = routed_rows_hint(tokens, kTopK, kExperts);
      for (int const r : rows) {
        over += r > hint;
      }
    }
    // Fewer than one expert in a thousand loops over an extra pass.
    CHECK(over < kTrials * kExperts / 1000 + 1);
  }
}

}  // namespace
}  // namespace gcmoe::kernels
