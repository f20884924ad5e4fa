#pragma once
// `--save-detailed`: one CSV row per measured request, for spreadsheets and plot scripts.
// Columns: index, request_id, status, start_ms, prompt_tokens, output_tokens, ttft_ms, tpot_ms
// (empty below two tokens), e2el_ms, mean_itl_ms, finish_reason, error. Text fields are quoted
// with inner quotes doubled (RFC 4180).

#include <filesystem>
#include <string>
#include <vector>

#include "client/bench_metrics.h"
#include "engine/common/status.h"

namespace gcmoe::client {

std::string detailed_csv(std::vector<RequestOutcome> const& outcomes);

Status write_detailed_csv(std::filesystem::path const& path,
                          std::vector<RequestOutcome> const& outcomes);

}  // namespace gcmoe::client
