#pragma once
// The front-end's Prometheus metrics, rendered as text exposition format 0.0.4. Names are vLLM's
// with the `gcmoe:` prefix where they mean the same (vllm:time_to_first_token_seconds ->
// gcmoe:time_to_first_token_seconds, ...); per-rank step timing is gcmoe's own. Thread-safe.

#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace gcmoe::frontend {

class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void observe(double value);
  // `name_bucket{le=...}`, `name_sum`, `name_count` lines.
  void render(std::string const& name, std::string const& help, std::string& out) const;

 private:
  std::vector<double> bounds_;
  mutable std::mutex mutex_;
  std::vector<std::uint64_t> counts_;  // per bucket (not cumulative); last = +Inf
  double sum_ = 0.0;
  std::uint64_t count_ = 0;
};

// What the ranks last reported (the supervisor polls them).
struct RankGauges {
  std::uint32_t waiting = 0;
  std::uint32_t running = 0;
  std::uint64_t kv_blocks_used = 0;
  std::uint64_t kv_blocks_total = 0;
  std::uint64_t model_steps = 0;
  double step_seconds_sum = 0.0;
  double last_step_seconds = 0.0;
};

class ServingMetrics {
 public:
  ServingMetrics();

  void observe_time_to_first_token(double seconds) { ttft_.observe(seconds); }
  void observe_inter_token_latency(double seconds) { itl_.observe(seconds); }
  void observe_request(double e2e_seconds, std::uint32_t prompt_tokens,
                       std::uint32_t generation_tokens, std::string const& finished_reason);
  void set_ranks(std::vector<RankGauges> ranks);
  // A Generate that ended with an error status (refused, cancelled, failed).
  void count_error(std::string const& code);

  std::string render() const;

 private:
  Histogram ttft_;
  Histogram itl_;
  Histogram e2e_;
  mutable std::mutex mutex_;
  std::vector<RankGauges> ranks_;
  std::uint64_t prompt_tokens_ = 0;
  std::uint64_t generation_tokens_ = 0;
  std::map<std::string, std::uint64_t> finished_;  // by finished_reason
  std::map<std::string, std::uint64_t> errors_;    // by gRPC code name
};

}  // namespace gcmoe::frontend
