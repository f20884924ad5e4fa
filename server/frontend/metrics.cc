#include "server/frontend/metrics.h"

#include <fmt/format.h>

#include <algorithm>

namespace gcmoe::frontend {
namespace {

// vLLM's buckets for the same histograms (vllm/engine/metrics.py), seconds.
std::vector<double> const kTtftBuckets = {0.001, 0.005, 0.01, 0.02,  0.04,  0.06,  0.08, 0.1,
                                          0.25,  0.5,   0.75, 1.0,   2.5,   5.0,   7.5,  10.0,
                                          20.0,  40.0,  80.0, 160.0, 640.0, 2560.0};
std::vector<double> const kItlBuckets = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,  0.3,  0.4, 0.5,
                                         0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};
std::vector<double> const kE2eBuckets = {0.3,  0.5,   0.8,   1.0,   1.5,   2.0,    2.5,
                                         5.0,  10.0,  15.0,  20.0,  30.0,  40.0,   50.0,
                                         60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};

void header(std::string& out, std::string const& name, std::string const& help, char const* type) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  std::size_t const bucket = static_cast<std::size_t>(
      std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin());
  std::lock_guard<std::mutex> const lock(mutex_);
  ++counts_[bucket];
  sum_ += value;
  ++count_;
}

void Histogram::render(std::string const& name, std::string const& help, std::string& out) const {
  std::lock_guard<std::mutex> const lock(mutex_);
  header(out, name, help, "histogram");
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    out += fmt::format("{}_bucket{{le=\"{}\"}} {}\n", name, bounds_[i], cumulative);
  }
  cumulative += counts_.back();
  out += fmt::format("{}_bucket{{le=\"+Inf\"}} {}\n{}_sum {}\n{}_count {}\n", name, cumulative,
                     name, sum_, name, count_);
}

ServingMetrics::ServingMetrics() : ttft_(kTtftBuckets), itl_(kItlBuckets), e2e_(kE2eBuckets) {}

void ServingMetrics::observe_request(double e2e_seconds, std::uint32_t prompt_tokens,
                                     std::uint32_t generation_tokens,
                                     std::string const& finished_reason) {
  e2e_.observe(e2e_seconds);
  std::lock_guard<std::mutex> const lock(mutex_);
  prompt_tokens_ += prompt_tokens;
  generation_tokens_ += generation_tokens;
  ++finished_[finished_reason];
}

void ServingMetrics::set_ranks(std::vector<RankGauges> ranks) {
  std::lock_guard<std::mutex> const lock(mutex_);
  ranks_ = std::move(ranks);
}

void ServingMetrics::count_error(std::string const& code) {
  std::lock_guard<std::mutex> const lock(mutex_);
  ++errors_[code];
}

std::string ServingMetrics::render() const {
  std::string out;
  ttft_.render("gcmoe:time_to_first_token_seconds", "Time to first token, seconds.", out);
  itl_.render("gcmoe:inter_token_latency_seconds", "Time between consecutive tokens, seconds.",
              out);
  e2e_.render("gcmoe:e2e_request_latency_seconds", "Request latency end to end, seconds.", out);
  std::lock_guard<std::mutex> const lock(mutex_);
  std::uint64_t waiting = 0;
  std::uint64_t running = 0;
  std::uint64_t used = 0;
  std::uint64_t total = 0;
  for (RankGauges const& r : ranks_) {
    waiting += r.waiting;
    running += r.running;
    used += r.kv_blocks_used;
    total += r.kv_blocks_total;
  }
  header(out, "gcmoe:num_requests_running", "Requests running on the ranks.", "gauge");
  out += fmt::format("gcmoe:num_requests_running {}\n", running);
  header(out, "gcmoe:num_requests_waiting", "Requests waiting on the ranks.", "gauge");
  out += fmt::format("gcmoe:num_requests_waiting {}\n", waiting);
  header(out, "gcmoe:kv_cache_usage_perc", "KV-cache usage, 1 = full.", "gauge");
  out += fmt::format("gcmoe:kv_cache_usage_perc {}\n",
                     total == 0 ? 0.0 : static_cast<double>(used) / static_cast<double>(total));
  header(out, "gcmoe:prompt_tokens_total", "Prompt tokens of finished requests.", "counter");
  out += fmt::format("gcmoe:prompt_tokens_total {}\n", prompt_tokens_);
  header(out, "gcmoe:generation_tokens_total", "Generated tokens of finished requests.", "counter");
  out += fmt::format("gcmoe:generation_tokens_total {}\n", generation_tokens_);
  header(out, "gcmoe:request_success_total", "Finished requests by finish reason.", "counter");
  for (auto const& [reason, n] : finished_) {
    out += fmt::format("gcmoe:request_success_total{{finished_reason=\"{}\"}} {}\n", reason, n);
  }
  header(out, "gcmoe:request_error_total",
         "Generate calls that ended with an error status (refused, cancelled, failed), by gRPC "
         "status code.",
         "counter");
  for (auto const& [code, n] : errors_) {
    out += fmt::format("gcmoe:request_error_total{{code=\"{}\"}} {}\n", code, n);
  }
  header(out, "gcmoe:rank_steps_total", "Model steps run by each rank.", "counter");
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    out += fmt::format("gcmoe:rank_steps_total{{rank=\"{}\"}} {}\n", r, ranks_[r].model_steps);
  }
  header(out, "gcmoe:rank_step_seconds_total", "Wall time of each rank's model steps, seconds.",
         "counter");
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    out += fmt::format("gcmoe:rank_step_seconds_total{{rank=\"{}\"}} {}\n", r,
                       ranks_[r].step_seconds_sum);
  }
  header(out, "gcmoe:rank_last_step_seconds", "Each rank's last model step, seconds.", "gauge");
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    out += fmt::format("gcmoe:rank_last_step_seconds{{rank=\"{}\"}} {}\n", r,
                       ranks_[r].last_step_seconds);
  }
  return out;
}

}  // namespace gcmoe::frontend
