#include "client/progress_bar.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

namespace gcmoe::client {
namespace {

constexpr int kBarWidth = 30;
constexpr auto kRedraw = std::chrono::milliseconds(100);
constexpr auto kPlainInterval = std::chrono::seconds(5);

}  // namespace

std::string progress_line(ProgressCounts const& counts, std::int64_t total,
                          std::optional<double> duration_s, double elapsed_s) {
  double fraction = 0.0;
  std::string position;
  if (total > 0) {
    fraction = static_cast<double>(counts.done) / static_cast<double>(total);
    position = fmt::format("{}/{}", counts.done, total);
  } else if (duration_s && *duration_s > 0.0) {
    fraction = elapsed_s / *duration_s;
    position = fmt::format("{} done", counts.done);
  }
  fraction = std::clamp(fraction, 0.0, 1.0);
  int const filled = static_cast<int>(fraction * kBarWidth);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.resize(kBarWidth, '.');
  double const rate = elapsed_s > 0.0 ? static_cast<double>(counts.done) / elapsed_s : 0.0;
  return fmt::format("{:3.0f}% [{}] {} | {} in flight | {} failed | {:.1f} s | {:.2f} req/s",
                     fraction * 100.0, bar, position, counts.in_flight, counts.failed, elapsed_s,
                     rate);
}

ProgressBar::ProgressBar(std::string label, std::int64_t total, std::optional<double> duration_s,
                         bool enabled, std::FILE* out)
    : label_(std::move(label)),
      total_(total),
      duration_s_(duration_s),
      enabled_(enabled),
      interactive_(enabled && isatty(fileno(out)) != 0),
      out_(out) {}

ProgressBar::~ProgressBar() {
  stop();
}

void ProgressBar::start() {
  started_ = std::chrono::steady_clock::now();
  last_plain_ = started_;
  if (enabled_) {
    thread_ = std::thread([this] { run(); });
  }
}

void ProgressBar::request_finished(bool success) {
  in_flight_.fetch_sub(1);
  done_.fetch_add(1);
  if (!success) {
    failed_.fetch_add(1);
  }
}

void ProgressBar::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_ || !thread_.joinable()) {
      stopping_ = true;
      return;
    }
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  draw(true);
}

ProgressCounts ProgressBar::counts() const {
  return {done_.load(), failed_.load(), in_flight_.load()};
}

void ProgressBar::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, kRedraw, [this] { return stopping_; })) {
    draw(false);
  }
}

void ProgressBar::draw(bool final) {
  auto const now = std::chrono::steady_clock::now();
  double const elapsed = std::chrono::duration<double>(now - started_).count();
  std::string const line = progress_line(counts(), total_, duration_s_, elapsed);
  if (interactive_) {
    std::fprintf(out_, "\r%s: %s%s", label_.c_str(), line.c_str(), final ? "\n" : "");
    std::fflush(out_);
    return;
  }
  // Plain output: a line per 10% step (or every 5 s when the total is unknown), and the last.
  std::int64_t const decile = total_ > 0 ? done_.load() * 10 / total_ : -1;
  bool const due = total_ > 0 ? decile > last_plain_decile_ : now - last_plain_ >= kPlainInterval;
  if (final || due) {
    last_plain_decile_ = decile;
    last_plain_ = now;
    std::fprintf(out_, "%s: %s\n", label_.c_str(), line.c_str());
    std::fflush(out_);
  }
}

}  // namespace gcmoe::client
