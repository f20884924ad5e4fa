#pragma once
// When each benchmark request is sent: the inter-arrival times of `vllm bench serve`. With a
// finite --request-rate R and --burstiness b the gaps are Gamma(shape b, scale 1/(R·b)), so the
// mean gap is 1/R for every b; b = 1 is a Poisson process (exponential gaps), b < 1 burstier,
// b > 1 more regular. An infinite rate sends every request at once (all gaps 0).

#include <cstdint>
#include <random>

#include "engine/common/status.h"

namespace gcmoe::client {

class ArrivalSchedule {
 public:
  // INVALID_ARGUMENT unless rate > 0 (or +inf) and burstiness > 0.
  static StatusOr<ArrivalSchedule> create(double request_rate, double burstiness,
                                          std::uint64_t seed);

  // Seconds from the previous request to the next one.
  double next_gap_s();
  // Seconds from the start of the run to the next request (the running sum of the gaps).
  double next_arrival_s();

  bool unlimited() const { return unlimited_; }

 private:
  ArrivalSchedule(double request_rate, double burstiness, std::uint64_t seed);

  bool unlimited_ = false;
  std::mt19937_64 engine_;
  std::gamma_distribution<double> gap_;
  double clock_s_ = 0.0;
};

}  // namespace gcmoe::client
