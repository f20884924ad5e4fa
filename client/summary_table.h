#pragma once
// The end-of-run table of `vllm bench serve` ("============ Serving Benchmark Result ==="),
// same rows and widths, plus failed requests by gRPC code.

#include <string>

#include "client/bench_config.h"
#include "client/bench_metrics.h"

namespace gcmoe::client {

std::string summary_table(BenchConfig const& config, BenchMetrics const& metrics);

}  // namespace gcmoe::client
