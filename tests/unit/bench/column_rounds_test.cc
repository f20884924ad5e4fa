// Columns timed in rounds (bench/common/column_rounds.h): the order reverses every other round so
// that a drift falls on every column alike, each column keeps its rounds in order with their
// median and merged clock, and an error from one timing ends the loop.
#include "bench/common/column_rounds.h"

#include <vector>

#include "tests/support/catch.h"

namespace gcmoe::bench {
namespace {

TEST_CASE("Column rounds: listed order on even rounds, reversed on odd ones") {
  CHECK(column_order(0, 3) == std::vector<int>{0, 1, 2});
  CHECK(column_order(1, 3) == std::vector<int>{2, 1, 0});
  CHECK(column_order(4, 2) == std::vector<int>{0, 1});
  CHECK(column_order(3, 1) == std::vector<int>{0});
  CHECK(column_order(0, 0).empty());
}

TEST_CASE("Column rounds: a drift falls on every column alike") {
  // The power cap as measured (bench/NOTES.md): the first two timings of a point run at 1980 MHz,
  // every later one capped and 10% slower. Column 1 is truly 5% faster than columns 0 and 2,
  // which are equal; timed once each in order, column 2 would read 10% slower than column 0.
  double const true_us[] = {100.0, 95.0, 100.0};
  std::vector<int> calls;
  auto const time_one = [&](int c) -> StatusOr<ColumnSample> {
    bool const capped = calls.size() >= 2;
    calls.push_back(c);
    return ColumnSample{.us = true_us[c] * (capped ? 1.1 : 1.0),
                        .clock = {.samples = 2,
                                  .sm_mhz_mean = capped ? 1600.0 : 1980.0,
                                  .sm_mhz_min = capped ? 1580u : 1980u,
                                  .power_capped = capped ? 1.0 : 0.0}};
  };
  auto const rounds = time_in_rounds(3, 4, time_one);
  REQUIRE(rounds.ok());
  CHECK(calls == std::vector<int>{0, 1, 2, 2, 1, 0, 0, 1, 2, 2, 1, 0});
  REQUIRE(rounds->size() == 3);
  for (ColumnRounds const& column : *rounds) {
    CHECK(column.round_us.size() == 4);
    CHECK(column.clock.samples == 8);
    CHECK(column.clock.sm_mhz_min == 1580u);
  }
  // Column 0's rounds in round order: calls 0, 5, 6 and 11.
  std::vector<double> const column0 = {100.0, 110.0, 110.0, 110.0};
  for (std::size_t i = 0; i < column0.size(); ++i) {
    CHECK((*rounds)[0].round_us[i] == Approx(column0[i]));
  }
  CHECK((*rounds)[0].clock.power_capped == Approx(0.75));
  CHECK((*rounds)[2].clock.power_capped == Approx(1.0));
  // The medians keep the columns' true order and ratios.
  CHECK((*rounds)[0].median_us() == Approx(110.0));
  CHECK((*rounds)[1].median_us() == Approx(104.5));
  CHECK((*rounds)[2].median_us() == Approx(110.0));
}

TEST_CASE("Column rounds: the first error ends the loop") {
  int calls = 0;
  auto const time_one = [&](int c) -> StatusOr<ColumnSample> {
    ++calls;
    if (c == 1) {
      return Status(StatusCode::kDeadlineExceeded, "column 1 timed out");
    }
    return ColumnSample{.us = 1.0, .clock = {}};
  };
  auto const rounds = time_in_rounds(3, 2, time_one);
  CHECK(rounds.status().code() == StatusCode::kDeadlineExceeded);
  CHECK(calls == 2);
  CHECK(time_in_rounds(3, 0, time_one).status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("Column rounds: the upper median") {
  CHECK(upper_median({}) == 0.0);
  CHECK(upper_median({3.0}) == 3.0);
  CHECK(upper_median({5.0, 1.0, 3.0}) == 3.0);
  CHECK(upper_median({4.0, 1.0, 3.0, 2.0}) == 3.0);
}

}  // namespace
}  // namespace gcmoe::bench
