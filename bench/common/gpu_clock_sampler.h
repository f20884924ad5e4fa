#pragma once
// The SM clock and power a measurement ran at. On an H200 the MXFP4 expert kernels draw the
// board's 700 W limit at one GPU T ≥ 32 and the driver lowers the SM clock from ~1980 to
// ~1650 MHz; being issue-bound, their time follows it (bench/NOTES.md, MXFP4 v5.5). A benchmark
// starts a sampler before a timed column and stops it after, and records the statistics beside
// the time.
//
// NVML is loaded at run time (dlopen of libnvidia-ml.so.1, the driver's library): no build
// dependency, and where it is missing (CI, containers without the driver's NVML) the sampler
// reports no samples instead of failing the benchmark.

#include <atomic>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

namespace gcmoe::bench {

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
  // Fraction of samples with the software power cap (NVML reason 0x4) active.
  double power_capped = 0.0;
};

// Mean, minimum and power-cap fraction of `samples`.
ClockStats summarize(std::vector<ClockSample> const& samples);

// {"samples", "sm_mhz_mean", "sm_mhz_min", "power_w_mean", "power_capped"} for a result's JSON.
nlohmann::json clock_json(ClockStats const& stats);

class GpuClockSampler {
 public:
  // The CUDA device's NVML handle (matched by PCI bus id); unavailable without NVML. Without an
  // argument: the current device. Says once on stderr when NVML is unavailable.
  explicit GpuClockSampler(int cuda_device);
  GpuClockSampler();
  ~GpuClockSampler();
  GpuClockSampler(GpuClockSampler const&) = delete;
  GpuClockSampler& operator=(GpuClockSampler const&) = delete;

  bool available() const;
  // Samples every `period_us` (default 1 ms) on a thread until stop(); a running sampling is
  // stopped first.
  void start(int period_us = 1000);
  ClockStats stop();

 private:
  struct Nvml;
  static std::unique_ptr<Nvml> open_nvml(int cuda_device);
  std::unique_ptr<Nvml> nvml_;
  std::thread thread_;
  std::atomic<bool> running_{false};
  std::mutex mutex_;
  std::vector<ClockSample> samples_;
};

}  // namespace gcmoe::bench
