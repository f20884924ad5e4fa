// The paired-rounds verdict the layer benchmark plans with (bench/common/paired_rounds.h): the
// order alternates, the speed-up is the median of the per-round ratios (not the ratio of the
// medians), the spread and the rounds won come with it, and mismatched or empty inputs give
// zeros instead of a verdict.
#include "bench/common/paired_rounds.h"

#include <vector>

#include "tests/support/catch.h"

namespace gcmoe::bench {
namespace {

TEST_CASE("Paired rounds: the order alternates, the baseline first") {
  CHECK(baseline_first(0));
  CHECK_FALSE(baseline_first(1));
  CHECK(baseline_first(2));
  CHECK_FALSE(baseline_first(7));
}

TEST_CASE("Paired rounds: median of the per-round ratios, spread and rounds won") {
  // A drifting clock: both slow down together in rounds 2-3; the candidate wins rounds 0, 1, 3
  // and 4 and loses round 2.
  std::vector<double> const candidate = {100.0, 100.0, 120.0, 118.0, 99.0};
  std::vector<double> const baseline = {102.0, 101.0, 114.0, 120.0, 103.0};
  PairedSummary const s = summarize_pairs(candidate, baseline);
  CHECK(s.rounds == 5);
  CHECK(s.rounds_won == 4);
  CHECK_FALSE(s.won_every_round());
  CHECK(summarize_pairs({100.0, 99.0}, {101.0, 100.0}).won_every_round());
  REQUIRE(s.speedups.size() == 5);
  CHECK(s.speedups[2] == Approx(114.0 / 120.0));
  // Ratios 1.02, 1.01, 0.95, 1.0169, 1.0404: the median is round 3's.
  CHECK(s.speedup == Approx(120.0 / 118.0));
  CHECK(s.speedup_min == Approx(114.0 / 120.0));
  CHECK(s.speedup_max == Approx(103.0 / 99.0));
  // Medians of each side alone: 100 ... 120 -> 100.0 and 102 ... 120 -> 103.0; their ratio (1.03)
  // is not the verdict.
  CHECK(s.candidate_us == Approx(100.0));
  CHECK(s.baseline_us == Approx(103.0));
  nlohmann::json const j = paired_json(s);
  CHECK(j["rounds_faster"] == 4);
  CHECK(j["speedup"].get<double>() == Approx(120.0 / 118.0));
  CHECK(j["round_speedups"].size() == 5);
  nlohmann::json const named = paired_json(s, "without_pdl", "with_pdl");
  CHECK(named["without_pdl_us"].get<double>() == Approx(100.0));
  CHECK(named["with_pdl_us"].get<double>() == Approx(103.0));
  CHECK(named["rounds_without_pdl_faster"] == 4);
  CHECK_FALSE(named.contains("time_us"));
}

TEST_CASE("Paired rounds: no verdict from mismatched or empty inputs") {
  CHECK(summarize_pairs({}, {}).rounds == 0);
  CHECK_FALSE(summarize_pairs({}, {}).won_every_round());
  PairedSummary const s = summarize_pairs({1.0, 2.0}, {1.0});
  CHECK(s.rounds == 0);
  CHECK(s.speedup == 0.0);
  CHECK(s.speedups.empty());
}

TEST_CASE("Paired rounds: timed through time_in_rounds, the baseline first in even rounds") {
  // The candidate takes 90 µs, the baseline 100; every timing after the first two runs 10% slower
  // (the power cap), which falls on both sides alike.
  std::vector<bool> turns;
  auto const time_one = [&](bool candidate) -> StatusOr<double> {
    double const drift = turns.size() >= 2 ? 1.1 : 1.0;
    turns.push_back(candidate);
    return (candidate ? 90.0 : 100.0) * drift;
  };
  auto const s = time_pairs(3, time_one);
  REQUIRE(s.ok());
  CHECK(turns == std::vector<bool>{false, true, true, false, false, true});
  CHECK(s->rounds == 3);
  CHECK(s->rounds_won == 3);
  CHECK(s->speedup == Approx(100.0 / 90.0));
  CHECK(s->speedups[0] == Approx(100.0 / 90.0));
  CHECK(s->speedups[1] == Approx(100.0 / 90.0));
  // An error ends the pairs and is returned; no rounds is refused.
  auto const failing = [&](bool candidate) -> StatusOr<double> {
    if (candidate) {
      return Status(StatusCode::kDeadlineExceeded, "a wait timed out");
    }
    return 1.0;
  };
  CHECK(time_pairs(3, failing).status().code() == StatusCode::kDeadlineExceeded);
  CHECK(time_pairs(0, time_one).status().code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gcmoe::bench
