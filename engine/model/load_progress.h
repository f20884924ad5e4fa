#pragma once
// Progress of a weight load, counted by the loader's workers and logged through spdlog by the
// thread that waits on them: a line about every second (tensors, bytes, GB/s) and a summary.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace gcmoe::model {

class LoadProgress {
 public:
  using Clock = std::chrono::steady_clock;

  LoadProgress(std::string label, std::int64_t total_tensors, std::int64_t total_bytes,
               std::chrono::milliseconds interval);

  // Called by workers after each item: `tensors` checkpoint tensors, `bytes` read.
  void add(std::int64_t tensors, std::int64_t bytes);

  // Logs a progress line when `interval` has passed since the previous one.
  void log_if_due();

  double elapsed_seconds() const;
  std::int64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }
  std::int64_t tensors() const { return tensors_.load(std::memory_order_relaxed); }

 private:
  std::string label_;
  std::int64_t total_tensors_;
  std::int64_t total_bytes_;
  std::chrono::milliseconds interval_;
  Clock::time_point start_;
  Clock::time_point last_log_;
  std::int64_t last_bytes_ = 0;
  std::atomic<std::int64_t> tensors_{0};
  std::atomic<std::int64_t> bytes_{0};
};

// 1 GB = 1e9 bytes (the unit of link and disk bandwidth).
double to_gb(std::int64_t bytes);

}  // namespace gcmoe::model
