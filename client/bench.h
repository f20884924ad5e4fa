#pragma once
// One `gcmoe bench` run end to end: connect, learn the vocabulary and context size from
// GetModelInfo, run the warmup requests (discarded), run the measured requests, compute the
// metrics, print vLLM's summary table and write --save-result / --save-detailed files.

#include <cstdio>
#include <filesystem>
#include <optional>
#include <vector>

#include "client/bench_config.h"
#include "client/bench_metrics.h"
#include "engine/common/status.h"

namespace gcmoe::client {

struct BenchReport {
  BenchMetrics metrics;
  std::optional<std::filesystem::path> result_path;    // the JSON, when saved
  std::optional<std::filesystem::path> detailed_path;  // the CSV, when saved
};

// Checks the flags that do not depend on the server (lengths, rates, metric names,
// percentiles); INVALID_ARGUMENT naming the flag.
Status validate_bench_config(BenchConfig const& config);

// The summary table goes to `table_out`. OK even when some requests failed (they are counted by
// code); UNAVAILABLE when the target cannot be reached, FAILED_PRECONDITION when not one
// measured request completed (after the results are written), naming the first error.
StatusOr<BenchReport> run_bench(BenchConfig const& config, std::FILE* table_out = stdout);

}  // namespace gcmoe::client
