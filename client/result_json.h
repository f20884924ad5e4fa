#pragma once
// The `--save-result` JSON, with the key names of `vllm bench serve` so results sit next to
// published ones: date, backend, model_id, num_prompts, request_rate ("inf" or a number),
// burstiness, max_concurrency, duration, completed, failed, total_input_tokens,
// total_output_tokens, request_throughput, request_goodput, output_throughput,
// total_token_throughput, max_output_tokens_per_s, max_concurrent_requests and, per metric in
// --percentile-metrics, mean_/median_/std_/pNN_<metric>_ms. gcmoe adds failures_by_code
// (gRPC status code name -> count), target, model_type and the goodput objectives.
// --save-detailed adds vLLM's per-request arrays (input_lens, output_lens, ttfts, itls, errors).

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "client/bench_config.h"
#include "client/bench_metrics.h"
#include "engine/common/status.h"

namespace gcmoe::client {

// What the run learned about the server and when it ran.
struct RunInfo {
  std::string date;        // "20261129-193000" (local time, vLLM's format)
  std::string model_type;  // GetModelInfo's model_type, or "" when it was not answered
  std::string model_path;
  std::int64_t num_prompts = 0;  // measured requests sent
};

nlohmann::json result_json(BenchConfig const& config, RunInfo const& info,
                           BenchMetrics const& metrics,
                           std::vector<RequestOutcome> const& outcomes);

// vLLM's default file name: "gcmoe-<rate>qps-concurrency<N>-<date>.json" (concurrency part only
// when --max-concurrency is set).
std::string default_result_filename(BenchConfig const& config, std::string const& date);

// Writes `json` (indented) to `path`, creating the parent directory. INTERNAL naming the path
// when it cannot be written.
Status write_json_file(std::filesystem::path const& path, nlohmann::json const& json);

}  // namespace gcmoe::client
