// The expert-parallel row layout (kernels/moe/ep_plan_ref.h): every source's rows land in
// disjoint, contiguous, source-ordered ranges inside the owner's expert segments.
#include "kernels/moe/ep_plan_ref.h"

#include <random>
#include <vector>

#include "tests/support/catch.h"

namespace gcmoe::kernels {
namespace {

TEST_CASE("EP plan of a hand-made count matrix") {
  // 2 ranks, 4 experts (rank 0 owns 0-1, rank 1 owns 2-3).
  std::vector<int> const counts = {
      1, 2, 0, 3,  // source 0
      4, 0, 5, 1,  // source 1
  };
  auto p0 = ep_plan_ref(counts, 2, 4, 0);
  auto p1 = ep_plan_ref(counts, 2, 4, 1);
  REQUIRE((p0.ok() && p1.ok()));
  // Expert 0 at rank 0: source 0's 1 row at 0, source 1's 4 rows at 1; expert 1 from row 5.
  CHECK(p0->send_base == std::vector<int>{0, 5, 0, 5});
  CHECK(p1->send_base == std::vector<int>{1, 7, 0, 8});
  CHECK(p0->recv_offsets == std::vector<int>{0, 5, 7});
  CHECK(p1->recv_offsets == std::vector<int>{0, 5, 9});
  CHECK(p0->active == std::vector<int>{0, 1});
  CHECK(p1->active == std::vector<int>{0, 1});
}

TEST_CASE("EP plan: every received row has exactly one sender") {
  std::mt19937 rng(3);
  for (int const ranks : {1, 2, 4, 8}) {
    int const experts = 32;
    int const local = experts / ranks;
    std::vector<int> counts(static_cast<std::size_t>(ranks * experts));
    for (auto& c : counts) {
      c = static_cast<int>(rng() % 4);
    }
    counts[0] = 0;  // an expert some sources skip
    for (int owner = 0; owner < ranks; ++owner) {
      auto const at_owner = ep_plan_ref(counts, ranks, experts, owner);
      REQUIRE(at_owner.ok());
      std::vector<int> hits(static_cast<std::size_t>(at_owner->recv_offsets.back()), 0);
      for (int s = 0; s < ranks; ++s) {
        auto const plan = ep_plan_ref(counts, ranks, experts, s);
        REQUIRE(plan.ok());
        for (int l = 0; l < local; ++l) {
          int const e = owner * local + l;
          int const base = plan->send_base[static_cast<std::size_t>(e)];
          int const n = counts[static_cast<std::size_t>(s * experts + e)];
          CHECK(base >= at_owner->recv_offsets[static_cast<std::size_t>(l)]);
          CHECK(base + n <= at_owner->recv_offsets[static_cast<std::size_t>(l) + 1]);
          for (int i = 0; i < n; ++i) {
            ++hits[static_cast<std::size_t>(base + i)];
          }
        }
      }
      for (int const h : hits) {
        CHECK(h == 1);
      }
    }
  }
}

TEST_CASE("EP plan refuses bad shapes") {
  std::vector<int> const counts(8, 1);
  CHECK(ep_plan_ref(counts, 3, 8, 0).status().code() == StatusCode::kInvalidArgument);
  CHECK(ep_plan_ref(counts, 2, 4, 2).status().code() == StatusCode::kInvalidArgument);
  CHECK(ep_plan_ref(counts, 2, 8, 0).status().code() == StatusCode::kInvalidArgument);
  std::vector<int> negative(8, 1);
  negative[3] = -1;
  CHECK(ep_plan_ref(negative, 2, 4, 0).status().code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gcmoe::kernels
