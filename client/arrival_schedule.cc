#include "client/arrival_schedule.h"

#include <cmath>

#include "engine/common/check.h"

namespace gcmoe::client {

StatusOr<ArrivalSchedule> ArrivalSchedule::create(double request_rate, double burstiness,
                                                  std::uint64_t seed) {
  GCMOE_CHECK_ARG(request_rate > 0.0 && !std::isnan(request_rate),
                  "--request-rate must be > 0 or inf, got {}", request_rate);
  GCMOE_CHECK_ARG(burstiness > 0.0 && std::isfinite(burstiness),
                  "--burstiness must be a finite number > 0, got {}", burstiness);
  return ArrivalSchedule(request_rate, burstiness, seed);
}

ArrivalSchedule::ArrivalSchedule(double request_rate, double burstiness, std::uint64_t seed)
    : unlimited_(std::isinf(request_rate)), engine_(seed) {
  if (!unlimited_) {
    // theta = 1 / (rate · burstiness): mean gap = shape · theta = 1 / rate.
    gap_ = std::gamma_distribution<double>(burstiness, 1.0 / (request_rate * burstiness));
  }
}

double ArrivalSchedule::next_gap_s() {
  return unlimited_ ? 0.0 : gap_(engine_);
}

double ArrivalSchedule::next_arrival_s() {
  clock_s_ += next_gap_s();
  return clock_s_;
}

}  // namespace gcmoe::client
