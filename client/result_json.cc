#include "client/result_json.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>

#include "engine/common/check.h"

namespace gcmoe::client {
namespace {

nlohmann::json rate_json(double rate) {
  if (std::isinf(rate)) {
    return "inf";
  }
  return rate;
}

std::string rate_text(double rate) {
  return std::isinf(rate) ? "inf" : fmt::format("{}", rate);
}

}  // namespace

nlohmann::json result_json(BenchConfig const& config, RunInfo const& info,
                           BenchMetrics const& metrics,
                           std::vector<RequestOutcome> const& outcomes) {
  nlohmann::json j;
  j["date"] = info.date;
  j["backend"] = "gcmoe-grpc";
  j["label"] = config.label;
  j["target"] = config.target;
  j["model_id"] = info.model_path;
  j["model_type"] = info.model_type;
  j["num_prompts"] = info.num_prompts;
  j["request_rate"] = rate_json(config.request_rate);
  j["burstiness"] = config.burstiness;
  j["max_concurrency"] =
      config.max_concurrency ? nlohmann::json(*config.max_concurrency) : nlohmann::json(nullptr);
  j["random_input_len"] = config.random_input_len;
  j["random_output_len"] = config.random_output_len;
  j["random_range_ratio"] = config.random_range_ratio;
  j["ignore_eos"] = config.ignore_eos;
  j["seed"] = config.seed;

  j["duration"] = metrics.duration_s;
  j["completed"] = metrics.completed;
  j["failed"] = metrics.failed;
  j["failures_by_code"] = metrics.failures_by_code;
  j["total_input_tokens"] = metrics.total_input_tokens;
  j["total_output_tokens"] = metrics.total_output_tokens;
  j["request_throughput"] = metrics.request_throughput;
  j["request_goodput"] =
      metrics.request_goodput ? nlohmann::json(*metrics.request_goodput) : nlohmann::json(nullptr);
  nlohmann::json slo = nlohmann::json::object();
  if (config.goodput.ttft_ms) {
    slo["ttft"] = *config.goodput.ttft_ms;
  }
  if (config.goodput.tpot_ms) {
    slo["tpot"] = *config.goodput.tpot_ms;
  }
  if (config.goodput.e2el_ms) {
    slo["e2el"] = *config.goodput.e2el_ms;
  }
  j["goodput_slo_ms"] = slo;
  j["output_throughput"] = metrics.output_throughput;
  j["total_token_throughput"] = metrics.total_token_throughput;
  j["max_output_tokens_per_s"] = metrics.max_output_tokens_per_s;
  j["max_concurrent_requests"] = metrics.max_concurrent_requests;

  for (std::string const& name : config.percentile_metrics) {
    auto const found = metrics.latency.find(name);
    if (found == metrics.latency.end()) {
      continue;
    }
    MetricSummary const& s = found->second;
    j[fmt::format("mean_{}_ms", name)] = s.mean_ms;
    j[fmt::format("median_{}_ms", name)] = s.median_ms;
    j[fmt::format("std_{}_ms", name)] = s.std_ms;
    for (auto const& [p, value] : s.percentiles_ms) {
      j[fmt::format("p{}_{}_ms", percentile_label(p), name)] = value;
    }
  }

  if (config.save_detailed) {
    nlohmann::json input_lens = nlohmann::json::array();
    nlohmann::json output_lens = nlohmann::json::array();
    nlohmann::json ttfts = nlohmann::json::array();
    nlohmann::json itls = nlohmann::json::array();
    nlohmann::json errors = nlohmann::json::array();
    for (RequestOutcome const& o : outcomes) {
      input_lens.push_back(o.prompt_tokens);
      output_lens.push_back(o.output_tokens);
      ttfts.push_back(o.ttft_s);
      itls.push_back(o.itl_s);
      errors.push_back(o.success ? std::string() : o.status_code + ": " + o.error);
    }
    j["input_lens"] = std::move(input_lens);
    j["output_lens"] = std::move(output_lens);
    j["ttfts"] = std::move(ttfts);
    j["itls"] = std::move(itls);
    j["errors"] = std::move(errors);
  }
  return j;
}

std::string default_result_filename(BenchConfig const& config, std::string const& date) {
  std::string const concurrency =
      config.max_concurrency ? fmt::format("-concurrency{}", *config.max_concurrency) : "";
  return fmt::format("gcmoe-{}qps{}-{}.json", rate_text(config.request_rate), concurrency, date);
}

Status write_json_file(std::filesystem::path const& path, nlohmann::json const& json) {
  std::error_code error;
  if (path.has_parent_path()) {
    std::filesystem::create_directories(path.parent_path(), error);
    GCMOE_CHECK_INTERNAL(!error, "cannot create {}: {}", path.parent_path().string(),
                         error.message());
  }
  std::ofstream out(path);
  out << json.dump(2) << "\n";
  GCMOE_CHECK_INTERNAL(static_cast<bool>(out), "cannot write {}", path.string());
  return Status();
}

}  // namespace gcmoe::client
