#pragma once
// A benchmark point's columns (kernels or configurations of one operator) timed in rounds: every
// column once per round, in the listed order on even rounds and reversed on odd ones, and each
// column's time the median of its rounds. Why: at one rank of eight T ≥ 64 the expert FFNs draw
// the H200's 700 W within tens of milliseconds and the driver lowers the SM clock from 1980 to
// ~1600 MHz, so columns timed one after the other ran at different clocks — the first near 1980,
// the later ones capped — and a column's place in the order decided up to 10% of its time
// (bench/NOTES.md, "The column order and the power cap"). Plain arithmetic and a loop over a
// callback, no CUDA: unit-tested everywhere (tests/unit/bench).

#include <functional>
#include <vector>

#include "bench/common/clock_stats.h"
#include "engine/common/status.h"

namespace gcmoe::bench {

// The column indices of round `round` (from 0): 0 .. columns - 1, reversed when round is odd.
std::vector<int> column_order(int round, int columns);

// The upper median (the middle value of an odd count); 0 for none.
double upper_median(std::vector<double> values);

// One timing of one column: µs, and the clock it ran at.
struct ColumnSample {
  double us = 0.0;
  ClockStats clock;
};

// A column's timings, one per round, in round order; its clock over all of them.
struct ColumnRounds {
  std::vector<double> round_us;
  ClockStats clock;
  double median_us() const { return upper_median(round_us); }
};

// Calls time_one(column) for every column in `rounds` rounds (column_order); the first error ends
// the loop and is returned. rounds ≥ 1, columns ≥ 0.
StatusOr<std::vector<ColumnRounds>> time_in_rounds(
    int columns, int rounds, std::function<StatusOr<ColumnSample>(int)> const& time_one);

}  // namespace gcmoe::bench
