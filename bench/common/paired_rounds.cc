#include "bench/common/paired_rounds.h"

#include <algorithm>

#include "bench/common/column_rounds.h"
#include "engine/common/check.h"

namespace gcmoe::bench {

PairedSummary summarize_pairs(std::vector<double> const& candidate_us,
                              std::vector<double> const& baseline_us) {
  PairedSummary s;
  if (candidate_us.empty() || candidate_us.size() != baseline_us.size()) {
    return s;
  }
  for (std::size_t i = 0; i < candidate_us.size(); ++i) {
    s.speedups.push_back(candidate_us[i] > 0.0 ? baseline_us[i] / candidate_us[i] : 0.0);
    s.rounds_won += baseline_us[i] > candidate_us[i] ? 1 : 0;
  }
  s.rounds = static_cast<int>(s.speedups.size());
  s.candidate_us = upper_median(candidate_us);
  s.baseline_us = upper_median(baseline_us);
  s.speedup = upper_median(s.speedups);
  auto const [lo, hi] = std::minmax_element(s.speedups.begin(), s.speedups.end());
  s.speedup_min = *lo;
  s.speedup_max = *hi;
  return s;
}

nlohmann::json paired_json(PairedSummary const& s) {
  return {{"time_us", s.candidate_us},     {"sequential_us", s.baseline_us}, {"speedup", s.speedup},
          {"speedup_min", s.speedup_min},  {"speedup_max", s.speedup_max},   {"rounds", s.rounds},
          {"rounds_faster", s.rounds_won}, {"round_speedups", s.speedups}};
}

StatusOr<PairedSummary> time_pairs(int rounds,
                                   std::function<StatusOr<double>(bool)> const& time_one) {
  GCMOE_ASSIGN_OR_RETURN(std::vector<ColumnRounds> const columns,
                         time_in_rounds(2, rounds, [&](int c) -> StatusOr<ColumnSample> {
                           GCMOE_ASSIGN_OR_RETURN(double const us, time_one(c == 1));
                           return ColumnSample{.us = us, .clock = {}};
                         }));
  return summarize_pairs(columns[1].round_us, columns[0].round_us);
}

nlohmann::json paired_json(PairedSummary const& s, std::string const& candidate,
                           std::string const& baseline) {
  return {{candidate + "_us", s.candidate_us},
          {baseline + "_us", s.baseline_us},
          {"speedup", s.speedup},
          {"speedup_min", s.speedup_min},
          {"speedup_max", s.speedup_max},
          {"rounds", s.rounds},
          {"rounds_" + candidate + "_faster", s.rounds_won},
          {"round_speedups", s.speedups}};
}

}  // namespace gcmoe::bench
