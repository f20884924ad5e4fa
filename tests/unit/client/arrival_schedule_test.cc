// Arrival schedules: the gamma gaps of `vllm bench serve` have mean 1/rate for every burstiness
// and squared coefficient of variation 1/burstiness (1 for Poisson).
#include "client/arrival_schedule.h"

#include <cmath>
#include <limits>
#include <vector>

#include "tests/support/catch.h"

namespace gcmoe::client {
namespace {

struct Moments {
  double mean = 0.0;
  double cv2 = 0.0;  // variance / mean²
};

Moments gap_moments(double rate, double burstiness, int samples) {
  ArrivalSchedule schedule = ArrivalSchedule::create(rate, burstiness, 1234).value();
  std::vector<double> gaps;
  for (int i = 0; i < samples; ++i) {
    gaps.push_back(schedule.next_gap_s());
  }
  double sum = 0.0;
  for (double const g : gaps) {
    sum += g;
  }
  double const mean = sum / samples;
  double var = 0.0;
  for (double const g : gaps) {
    var += (g - mean) * (g - mean);
  }
  var /= samples;
  return {mean, var / (mean * mean)};
}

TEST_CASE("Poisson arrivals: mean gap 1/rate, exponential spread") {
  Moments const m = gap_moments(10.0, 1.0, 40000);
  CHECK(m.mean == Approx(0.1).epsilon(0.02));
  CHECK(m.cv2 == Approx(1.0).epsilon(0.05));
}

TEST_CASE("Gamma burstiness keeps the rate and sets the spread to 1/burstiness") {
  for (double const b : {0.25, 0.5, 4.0}) {
    Moments const m = gap_moments(5.0, b, 40000);
    INFO("burstiness " << b);
    CHECK(m.mean == Approx(0.2).epsilon(0.03));
    CHECK(m.cv2 == Approx(1.0 / b).epsilon(0.08));
  }
}

TEST_CASE("Arrival times are the running sum of the gaps and repeat for a seed") {
  ArrivalSchedule a = ArrivalSchedule::create(2.0, 1.0, 7).value();
  ArrivalSchedule b = ArrivalSchedule::create(2.0, 1.0, 7).value();
  double previous = 0.0;
  for (int i = 0; i < 100; ++i) {
    double const t = a.next_arrival_s();
    CHECK(t == b.next_arrival_s());
    CHECK(t >= previous);
    previous = t;
  }
  ArrivalSchedule c = ArrivalSchedule::create(2.0, 1.0, 8).value();
  ArrivalSchedule d = ArrivalSchedule::create(2.0, 1.0, 7).value();
  CHECK(c.next_gap_s() != d.next_gap_s());
}

TEST_CASE("An infinite rate sends everything at once") {
  ArrivalSchedule s =
      ArrivalSchedule::create(std::numeric_limits<double>::infinity(), 1.0, 0).value();
  CHECK(s.unlimited());
  for (int i = 0; i < 10; ++i) {
    CHECK(s.next_arrival_s() == 0.0);
  }
}

TEST_CASE("Bad rates and burstiness are INVALID_ARGUMENT") {
  CHECK(ArrivalSchedule::create(0.0, 1.0, 0).status().code() == StatusCode::kInvalidArgument);
  CHECK(ArrivalSchedule::create(-1.0, 1.0, 0).status().code() == StatusCode::kInvalidArgument);
  CHECK(ArrivalSchedule::create(std::nan(""), 1.0, 0).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(ArrivalSchedule::create(1.0, 0.0, 0).status().code() == StatusCode::kInvalidArgument);
  CHECK(ArrivalSchedule::create(1.0, std::numeric_limits<double>::infinity(), 0).status().code() ==
        StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gcmoe::client
