#pragma once
// Statistics of the SM clock and power samples taken while a benchmark column is timed
// (bench/common/gpu_clock_sampler.h takes them through NVML): plain data and arithmetic, no CUDA,
// so they are unit-tested on machines without a GPU (tests/unit/bench).

#include <nlohmann/json.hpp>
#include <vector>

namespace gcmoe::bench {

// NVML's clock event reason bit for the software power cap (nvmlClocksEventReasonSwPowerCap).
inline constexpr unsigned long long kSwPowerCapReason = 0x4;

struct ClockSample {
  unsigned sm_mhz = 0;
  unsigned power_mw = 0;
  unsigned long long event_reasons = 0;  // NVML clock event reason bits
};

struct ClockStats {
  int samples = 0;  // 0: NVML unavailable or nothing sampled; the rest are then 0
  double sm_mhz_mean = 0.0;
  unsigned sm_mhz_min = 0;
  // NVML's board power is a running average (about 1 s on an H200): it lags the column, so read
  // it as the power history the column started in, not its own draw.
  double power_w_mean = 0.0;
  // Fraction of samples with the software power cap active.
  double power_capped = 0.0;
};

// Mean, minimum and power-cap fraction of `samples`.
ClockStats summarize(std::vector<ClockSample> const& samples);

// The statistics of a and b's samples together (means weighted by their sample counts; a side
// with no samples contributes nothing).
ClockStats merge(ClockStats const& a, ClockStats const& b);

// {"samples", "sm_mhz_mean", "sm_mhz_min", "power_w_mean", "power_capped"} for a result's JSON.
nlohmann::json clock_json(ClockStats const& stats);

}  // namespace gcmoe::bench
