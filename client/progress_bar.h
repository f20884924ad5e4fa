#pragma once
// A live progress line on stderr while a benchmark runs: done/total (or elapsed/duration), in
// flight, failed, and requests per second. On a terminal it redraws in place every 100 ms; when
// stderr is not a terminal (CI logs) it prints a plain line at most every 10% or 5 s instead.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace gcmoe::client {

struct ProgressCounts {
  std::int64_t done = 0;  // finished, successfully or not
  std::int64_t failed = 0;
  std::int64_t in_flight = 0;
};

// The text of one progress line (no newline), for a run of `total` requests (0: unknown, then
// `duration_s` gives the denominator as time).
std::string progress_line(ProgressCounts const& counts, std::int64_t total,
                          std::optional<double> duration_s, double elapsed_s);

class ProgressBar {
 public:
  // `enabled` false: every call is a no-op (--disable-tqdm).
  ProgressBar(std::string label, std::int64_t total, std::optional<double> duration_s, bool enabled,
              std::FILE* out = stderr);
  ~ProgressBar();
  ProgressBar(ProgressBar const&) = delete;
  ProgressBar& operator=(ProgressBar const&) = delete;

  void start();
  void request_started() { in_flight_.fetch_add(1); }
  void request_finished(bool success);
  // Draws the final state and ends the line.
  void stop();

 private:
  void run();
  void draw(bool final);
  ProgressCounts counts() const;

  std::string label_;
  std::int64_t total_;
  std::optional<double> duration_s_;
  bool enabled_;
  bool interactive_;
  std::FILE* out_;
  std::atomic<std::int64_t> done_{0};
  std::atomic<std::int64_t> failed_{0};
  std::atomic<std::int64_t> in_flight_{0};
  std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::time_point last_plain_;
  std::int64_t last_plain_decile_ = -1;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace gcmoe::client
