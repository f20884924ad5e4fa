#include "bench/common/column_rounds.h"

#include <algorithm>

#include "engine/common/check.h"

namespace gcmoe::bench {

std::vector<int> column_order(int round, int columns) {
  std::vector<int> order;
  for (int c = 0; c < columns; ++c) {
    order.push_back(round % 2 == 0 ? c : columns - 1 - c);
  }
  return order;
}

double upper_median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0.0 : values[values.size() / 2];
}

StatusOr<std::vector<ColumnRounds>> time_in_rounds(
    int columns, int rounds, std::function<StatusOr<ColumnSample>(int)> const& time_one) {
  GCMOE_CHECK_ARG(rounds >= 1 && columns >= 0, "time_in_rounds: {} rounds of {} columns", rounds,
                  columns);
  std::vector<ColumnRounds> out(static_cast<std::size_t>(columns));
  for (int round = 0; round < rounds; ++round) {
    for (int const c : column_order(round, columns)) {
      GCMOE_ASSIGN_OR_RETURN(ColumnSample const sample, time_one(c));
      ColumnRounds& column = out[static_cast<std::size_t>(c)];
      column.round_us.push_back(sample.us);
      column.clock = merge(column.clock, sample.clock);
    }
  }
  return out;
}

}  // namespace gcmoe::bench
