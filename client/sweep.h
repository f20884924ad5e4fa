#pragma once
// Sweep mode: the same benchmark at several --max-concurrency or --request-rate values, one
// result JSON per point (<stem>-c<N>.json or <stem>-r<R>.json in --result-dir) plus
// <stem>-sweep.json listing every point's throughput and latency percentiles, which
// client/plot.py draws (latency CDFs, throughput vs latency).

#include <string>
#include <vector>

#include "client/bench.h"
#include "client/bench_config.h"
#include "engine/common/status.h"

namespace gcmoe::client {

enum class SweepAxis {
  kMaxConcurrency,
  kRequestRate,
};

struct SweepSpec {
  SweepAxis axis = SweepAxis::kMaxConcurrency;
  std::vector<double> values;  // concurrencies (integers >= 1) or rates (> 0, inf allowed)
};

// Parses "1,2,4,8" (concurrency) or "0.5,1,2,inf" (rate). INVALID_ARGUMENT naming the item.
StatusOr<std::vector<double>> parse_sweep_values(std::string const& text, SweepAxis axis);

// The file stem of a point: "<stem>-c8", "<stem>-r0.5", "<stem>-rinf".
std::string sweep_point_name(std::string const& stem, SweepAxis axis, double value);

// Runs every point in order (a failed point is recorded, the sweep goes on) and writes the
// summary. Results always go to files: --result-dir, --result-filename's stem (default
// "gcmoe-sweep").
Status run_sweep(BenchConfig const& config, SweepSpec const& spec);

}  // namespace gcmoe::client
