#pragma once
// What one `gcmoe bench` run does: the flags of `vllm bench serve` (same names, same defaults
// where the meaning is the same) gathered in one struct, filled by server/cli/bench_command.cc.

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace gcmoe::client {

// Service-level objectives for goodput (vLLM `--goodput ttft:MS tpot:MS e2el:MS`): a completed
// request is "good" when every given metric is at or under its bound.
struct GoodputSlo {
  std::optional<double> ttft_ms;
  std::optional<double> tpot_ms;
  std::optional<double> e2el_ms;

  bool any() const { return ttft_ms || tpot_ms || e2el_ms; }
};

// Sampling fields sent with every request; unset ones are left to the server's defaults.
struct BenchSampling {
  std::optional<float> temperature;
  std::optional<std::int32_t> top_k;
  std::optional<float> top_p;
  std::optional<float> min_p;
};

struct BenchConfig {
  std::string target = "localhost:50051";       // host:port of `gcmoe serve`
  std::optional<std::int64_t> max_concurrency;  // unset: bounded only by arrivals
  // Requests per second; infinity sends every request at once (vLLM's default).
  double request_rate = std::numeric_limits<double>::infinity();
  double burstiness = 1.0;  // gamma shape of the inter-arrival times; 1 = Poisson
  std::int64_t num_prompts = 1000;
  std::optional<double> duration_s;  // set: send requests for this long instead of num_prompts
  std::int64_t random_input_len = 1024;
  std::int64_t random_output_len = 128;
  double random_range_ratio = 0.0;  // lengths uniform in [len·(1−r), len·(1+r)]
  bool ignore_eos = false;
  std::uint64_t seed = 0;
  std::int64_t warmup = 0;  // requests run (and discarded) before the measured ones
  GoodputSlo goodput;
  std::vector<std::string> percentile_metrics = {"ttft", "tpot", "itl", "e2el"};
  std::vector<double> metric_percentiles = {99.0};
  BenchSampling sampling;
  std::optional<std::uint32_t> vocab_size;  // unset: GetModelInfo's vocab_size
  double request_timeout_s = 600.0;         // gRPC deadline of each request
  double connect_timeout_s = 10.0;          // waiting for the channel to connect at the start
  // Client threads (= streams in flight) when --max-concurrency is unset.
  std::int64_t max_client_streams = 1024;
  bool progress = true;  // live progress bar on stderr (--disable-tqdm turns it off)
  std::string label;     // free text copied into the result JSON

  // --save-result / --result-dir / --result-filename / --save-detailed, as in vLLM.
  bool save_result = false;
  bool save_detailed = false;
  std::string result_dir = ".";
  std::string result_filename;  // empty: gcmoe-<rate>qps-<concurrency>-<date>.json
};

// The metrics `--percentile-metrics` accepts.
inline constexpr char const* kPercentileMetricNames[] = {"ttft", "tpot", "itl", "e2el"};

}  // namespace gcmoe::client
