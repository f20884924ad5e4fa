#pragma once
// Paired rounds: a candidate and a baseline timed next to each other, round after round, the order
// alternating (the baseline first in even rounds), so that drift over a run — the 700 W power cap
// moves the SM clock with the power of the last second, and single timings of identical graphs
// read up to 16% apart (bench/NOTES.md, "Plans from paired timings") — falls on both alike, and
// whichever runs first in a pair gains or loses the same number of times. The verdict is the
// median of the per-round ratios, with their spread and the rounds won. Plain arithmetic, no
// CUDA: unit-tested everywhere (tests/unit/bench).

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/common/column_rounds.h"
#include "engine/common/status.h"

namespace gcmoe::bench {

// Whether round `round` (from 0) times the baseline before the candidate: the pair is
// time_in_rounds' two columns, the baseline column 0 (column_rounds.h).
inline bool baseline_first(int round) {
  return column_order(round, 2).front() == 0;
}

struct PairedSummary {
  double candidate_us = 0.0;  // median over the rounds
  double baseline_us = 0.0;   // median over the rounds
  double speedup = 0.0;       // median of baseline ÷ candidate per round
  double speedup_min = 0.0;
  double speedup_max = 0.0;
  int rounds = 0;
  int rounds_won = 0;            // rounds with the candidate faster
  std::vector<double> speedups;  // per round, in order
  // The candidate was faster in every round (and there were rounds).
  bool won_every_round() const { return rounds > 0 && rounds_won == rounds; }
};

// One entry per round in each (the same count; else, or with none, an all-zero summary).
PairedSummary summarize_pairs(std::vector<double> const& candidate_us,
                              std::vector<double> const& baseline_us);

// {"time_us", "sequential_us", "speedup", "speedup_min", "speedup_max", "rounds",
// "rounds_faster", "round_speedups"} for a result's JSON (the baseline is the sequential layer).
nlohmann::json paired_json(PairedSummary const& s);

// The same with the two sides named: {"<candidate>_us", "<baseline>_us", "speedup", "speedup_min",
// "speedup_max", "rounds", "rounds_<candidate>_faster", "round_speedups"} (e.g. "without_pdl",
// "with_pdl").
nlohmann::json paired_json(PairedSummary const& s, std::string const& candidate,
                           std::string const& baseline);

// `rounds` pairs of time_one(false) (the baseline, µs) and time_one(true) (the candidate) through
// time_in_rounds, the baseline first in even rounds; the first error ends them. rounds ≥ 1.
StatusOr<PairedSummary> time_pairs(int rounds,
                                   std::function<StatusOr<double>(bool)> const& time_one);

}  // namespace gcmoe::bench
