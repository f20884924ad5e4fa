#pragma once
// `--goodput ttft:MS tpot:MS e2el:MS` (vLLM's syntax): parsing, and whether one completed
// request met every objective given.

#include <string>
#include <vector>

#include "client/bench_config.h"
#include "engine/common/status.h"

namespace gcmoe::client {

// Items "name:milliseconds" with name in ttft, tpot, e2el, each at most once, value >= 0.
// INVALID_ARGUMENT naming the bad item otherwise.
StatusOr<GoodputSlo> parse_goodput(std::vector<std::string> const& items);

// Latencies of one completed request, in milliseconds (tpot 0 for a one-token output).
bool meets_slo(GoodputSlo const& slo, double ttft_ms, double tpot_ms, double e2el_ms);

}  // namespace gcmoe::client
