// The clock statistics the GPU benchmarks record beside each time (bench/common/clock_stats.h):
// mean and minimum SM clock, mean power, the share of samples under the software power cap, and
// nothing but zeros when no sample came (NVML missing).
#include "bench/common/clock_stats.h"

#include <vector>

#include "tests/support/catch.h"

namespace gcmoe::bench {
namespace {

TEST_CASE("Clock statistics of a column's samples") {
  // Three samples at full clock, one capped at 1650 MHz with another reason bit set beside the
  // power cap (0x4), one with only another reason (not capped).
  std::vector<ClockSample> const samples = {
      {1980, 650'000, 0x0}, {1980, 690'000, 0x1}, {1650, 700'000, 0x4 | 0x1}, {1965, 700'000, 0x0}};
  ClockStats const s = summarize(samples);
  CHECK(s.samples == 4);
  CHECK(s.sm_mhz_mean == Approx((1980.0 + 1980 + 1650 + 1965) / 4));
  CHECK(s.sm_mhz_min == 1650u);
  CHECK(s.power_w_mean == Approx((650.0 + 690 + 700 + 700) / 4));
  CHECK(s.power_capped == Approx(0.25));
  nlohmann::json const j = clock_json(s);
  CHECK(j["samples"] == 4);
  CHECK(j["sm_mhz_min"] == 1650);
  CHECK(j["power_capped"].get<double>() == Approx(0.25));
}

TEST_CASE("Clock statistics without samples are all zero") {
  ClockStats const s = summarize({});
  CHECK(s.samples == 0);
  CHECK(s.sm_mhz_mean == 0.0);
  CHECK(s.sm_mhz_min == 0u);
  CHECK(s.power_w_mean == 0.0);
  CHECK(s.power_capped == 0.0);
  CHECK(clock_json(s)["samples"] == 0);
}

TEST_CASE("Clock statistics of two columns' samples together") {
  ClockStats const a{.samples = 3,
                     .sm_mhz_mean = 1980.0,
                     .sm_mhz_min = 1965,
                     .power_w_mean = 600.0,
                     .power_capped = 0.0};
  ClockStats const b{.samples = 1,
                     .sm_mhz_mean = 1600.0,
                     .sm_mhz_min = 1580,
                     .power_w_mean = 700.0,
                     .power_capped = 1.0};
  ClockStats const m = merge(a, b);
  CHECK(m.samples == 4);
  CHECK(m.sm_mhz_mean == Approx((3 * 1980.0 + 1600.0) / 4));
  CHECK(m.sm_mhz_min == 1580u);
  CHECK(m.power_w_mean == Approx(625.0));
  CHECK(m.power_capped == Approx(0.25));
  // A side without samples (NVML missing, or the first of a series) adds nothing.
  CHECK(merge(ClockStats{}, b).sm_mhz_mean == 1600.0);
  CHECK(merge(a, ClockStats{}).samples == 3);
  CHECK(merge(ClockStats{}, ClockStats{}).samples == 0);
}

}  // namespace
}  // namespace gcmoe::bench
