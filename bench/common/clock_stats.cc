#include "bench/common/clock_stats.h"

#include <algorithm>

namespace gcmoe::bench {

ClockStats summarize(std::vector<ClockSample> const& samples) {
  ClockStats stats;
  if (samples.empty()) {
    return stats;
  }
  stats.samples = static_cast<int>(samples.size());
  stats.sm_mhz_min = samples.front().sm_mhz;
  int capped = 0;
  for (ClockSample const& s : samples) {
    stats.sm_mhz_mean += s.sm_mhz;
    stats.sm_mhz_min = std::min(stats.sm_mhz_min, s.sm_mhz);
    stats.power_w_mean += s.power_mw / 1000.0;
    capped += (s.event_reasons & kSwPowerCapReason) != 0 ? 1 : 0;
  }
  stats.sm_mhz_mean /= stats.samples;
  stats.power_w_mean /= stats.samples;
  stats.power_capped = static_cast<double>(capped) / stats.samples;
  return stats;
}

ClockStats merge(ClockStats const& a, ClockStats const& b) {
  if (a.samples == 0 || b.samples == 0) {
    return a.samples == 0 ? b : a;
  }
  double const n = a.samples + b.samples;
  auto const weighted = [&](double x, double y) { return (x * a.samples + y * b.samples) / n; };
  return {.samples = a.samples + b.samples,
          .sm_mhz_mean = weighted(a.sm_mhz_mean, b.sm_mhz_mean),
          .sm_mhz_min = std::min(a.sm_mhz_min, b.sm_mhz_min),
          .power_w_mean = weighted(a.power_w_mean, b.power_w_mean),
          .power_capped = weighted(a.power_capped, b.power_capped)};
}

nlohmann::json clock_json(ClockStats const& stats) {
  return {{"samples", stats.samples},
          {"sm_mhz_mean", stats.sm_mhz_mean},
          {"sm_mhz_min", stats.sm_mhz_min},
          {"power_w_mean", stats.power_w_mean},
          {"power_capped", stats.power_capped}};
}

}  // namespace gcmoe::bench
