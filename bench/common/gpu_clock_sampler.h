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
#include <thread>
#include <vector>

#include "bench/common/clock_stats.h"

namespace gcmoe::bench {

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
