#pragma once
// Per-request outcomes of a benchmark run and the aggregate metrics `vllm bench serve` reports:
// TTFT (to the first streamed chunk that carries tokens), TPOT = (e2e − ttft) / (tokens − 1) for
// outputs of two tokens or more, ITL (the gap before every chunk after the first), E2EL, the
// throughputs over the run's wall time, goodput, and failures counted by gRPC status code name.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "client/bench_config.h"

namespace gcmoe::client {

// Tokens that arrived in one streamed chunk, `at_s` seconds after the run started.
struct ChunkArrival {
  double at_s = 0.0;
  std::uint32_t tokens = 0;
};

struct RequestOutcome {
  std::int64_t index = 0;
  std::string request_id;
  bool success = false;
  std::string status_code = "OK";  // gRPC code name ("RESOURCE_EXHAUSTED") when it failed
  std::string error;               // the status message when it failed
  std::string finish_reason;       // "LENGTH", "EOS", ... from the final message
  std::int64_t prompt_tokens = 0;
  std::int64_t output_tokens = 0;  // tokens received
  double start_s = 0.0;            // when the request was sent, from the run start
  double ttft_s = 0.0;             // to the first chunk with tokens (0 if none arrived)
  double e2el_s = 0.0;             // to the end of the stream
  std::vector<double> itl_s;       // gaps between consecutive token chunks
  std::vector<ChunkArrival> chunks;
};

// TPOT of one request in seconds; nullopt for fewer than two output tokens.
std::optional<double> tpot_s(RequestOutcome const& outcome);

struct MetricSummary {
  double mean_ms = 0.0;
  double median_ms = 0.0;
  double std_ms = 0.0;
  std::vector<std::pair<double, double>> percentiles_ms;  // (p, value)
};

struct BenchMetrics {
  std::int64_t completed = 0;
  std::int64_t failed = 0;
  std::map<std::string, std::int64_t> failures_by_code;  // "RESOURCE_EXHAUSTED" -> count
  std::int64_t total_input_tokens = 0;                   // of completed requests
  std::int64_t total_output_tokens = 0;
  double duration_s = 0.0;
  double request_throughput = 0.0;        // completed / duration
  std::optional<double> request_goodput;  // good completed / duration, with --goodput only
  double output_throughput = 0.0;         // output tokens / duration
  double total_token_throughput = 0.0;    // (input + output tokens) / duration
  double max_output_tokens_per_s = 0.0;   // busiest whole second of the run
  std::int64_t max_concurrent_requests = 0;
  std::map<std::string, MetricSummary> latency;  // "ttft", "tpot", "itl", "e2el"
};

// `duration_s` is the measured run's wall time (first send to last answer).
BenchMetrics compute_metrics(std::vector<RequestOutcome> const& outcomes, double duration_s,
                             GoodputSlo const& goodput,
                             std::vector<double> const& metric_percentiles);

// "99" for 99, "99.9" for 99.9: the pNN part of vLLM's key names.
std::string percentile_label(double p);

}  // namespace gcmoe::client
