// The expert FFN benchmarks' random routing (bench/common/expert_routing.h): distinct experts per
// token, a rank's share of the pairs, offsets and active list consistent, reproducible by seed.
#include "bench/common/expert_routing.h"

#include <algorithm>
#include <vector>

#include "tests/support/catch.h"

namespace gcmoe::bench {
namespace {

void check_consistent(ExpertRouting const& r, int local) {
  REQUIRE(r.offsets.size() == static_cast<std::size_t>(local + 1));
  CHECK(r.offsets.front() == 0);
  CHECK(r.offsets.back() == r.rows);
  int max_rows = 0;
  std::vector<int> active;
  for (int e = 0; e < local; ++e) {
    int const rows = r.offsets[e + 1] - r.offsets[e];
    CHECK(rows >= 0);
    max_rows = std::max(max_rows, rows);
    if (rows > 0) {
      active.push_back(e);
    }
  }
  CHECK(r.active == active);
  CHECK(r.max_rows_per_expert == max_rows);
}

TEST_CASE("Expert FFN benchmark routing: every pair kept over all experts, distinct per token") {
  // One GPU at V4.1's shape: each token's top-6 are distinct, so no expert has more rows than
  // tokens, and every pair is kept.
  ExpertRouting const r = random_expert_routing(256, 384, 384, 6, 7);
  check_consistent(r, 384);
  CHECK(r.rows == 256 * 6);
  CHECK(r.max_rows_per_expert <= 256);
  // One token picks 6 distinct experts: 6 experts of one row each.
  ExpertRouting const one = random_expert_routing(1, 384, 384, 6, 3);
  CHECK(one.active.size() == 6);
  CHECK(one.max_rows_per_expert == 1);
  // top_k = experts: every token takes every expert once.
  ExpertRouting const all = random_expert_routing(5, 8, 8, 8, 1);
  CHECK(all.max_rows_per_expert == 5);
  CHECK(all.active.size() == 8);
}

TEST_CASE("Expert FFN benchmark routing: one rank keeps its experts' share, reproducibly") {
  // One rank of eight at GLM-5.2's shape (32 of 256 experts, top-8): about an eighth of the pairs.
  ExpertRouting const r = random_expert_routing(2048, 32, 256, 8, 11);
  check_consistent(r, 32);
  CHECK(r.rows > 2048 * 8 / 8 * 9 / 10);
  CHECK(r.rows < 2048 * 8 / 8 * 11 / 10);
  CHECK(r.max_rows_per_expert <= 2048);
  ExpertRouting const again = random_expert_routing(2048, 32, 256, 8, 11);
  CHECK(again.offsets == r.offsets);
  ExpertRouting const other = random_expert_routing(2048, 32, 256, 8, 12);
  CHECK(other.offsets != r.offsets);
  // No tokens: no rows, no active experts.
  ExpertRouting const none = random_expert_routing(0, 32, 256, 8, 1);
  check_consistent(none, 32);
  CHECK(none.rows == 0);
  CHECK(none.active.empty());
}

}  // namespace
}  // namespace gcmoe::bench
