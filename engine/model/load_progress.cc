#include "engine/model/load_progress.h"

#include <spdlog/spdlog.h>

#include <utility>

namespace gcmoe::model {

double to_gb(std::int64_t const bytes) {
  return static_cast<double>(bytes) / 1e9;
}

LoadProgress::LoadProgress(std::string label, std::int64_t const total_tensors,
                           std::int64_t const total_bytes, std::chrono::milliseconds const interval)
    : label_(std::move(label)),
      total_tensors_(total_tensors),
      total_bytes_(total_bytes),
      interval_(interval),
      start_(Clock::now()),
      last_log_(start_) {}

void LoadProgress::add(std::int64_t const tensors, std::int64_t const bytes) {
  tensors_.fetch_add(tensors, std::memory_order_relaxed);
  bytes_.fetch_add(bytes, std::memory_order_relaxed);
}

void LoadProgress::log_if_due() {
  Clock::time_point const now = Clock::now();
  if (now - last_log_ < interval_) {
    return;
  }
  double const window = std::chrono::duration<double>(now - last_log_).count();
  std::int64_t const done = bytes();
  double const percent = total_bytes_ > 0
                             ? 100.0 * static_cast<double>(done) / static_cast<double>(total_bytes_)
                             : 100.0;
  spdlog::info("{}: {}/{} tensors, {:.2f}/{:.2f} GB ({:.0f}%), {:.2f} GB/s", label_, tensors(),
               total_tensors_, to_gb(done), to_gb(total_bytes_), percent,
               to_gb(done - last_bytes_) / window);
  last_log_ = now;
  last_bytes_ = done;
}

double LoadProgress::elapsed_seconds() const {
  return std::chrono::duration<double>(Clock::now() - start_).count();
}

}  // namespace gcmoe::model
