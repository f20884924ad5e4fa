#include "client/percentiles.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace gcmoe::client {

double percentile(std::vector<double> values, double p) {
  if (values.empty()) {
    return 0.0;
  }
  std::sort(values.begin(), values.end());
  double const rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(values.size() - 1);
  auto const below = static_cast<std::size_t>(std::floor(rank));
  std::size_t const above = std::min(below + 1, values.size() - 1);
  double const fraction = rank - static_cast<double>(below);
  return values[below] + (values[above] - values[below]) * fraction;
}

double mean(std::vector<double> const& values) {
  if (values.empty()) {
    return 0.0;
  }
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

double median(std::vector<double> const& values) {
  return percentile(values, 50.0);
}

double population_stddev(std::vector<double> const& values) {
  if (values.empty()) {
    return 0.0;
  }
  double const m = mean(values);
  double sum_sq = 0.0;
  for (double const v : values) {
    sum_sq += (v - m) * (v - m);
  }
  return std::sqrt(sum_sq / static_cast<double>(values.size()));
}

}  // namespace gcmoe::client
