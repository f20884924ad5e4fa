#include "client/sweep.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "client/goodput.h"
#include "client/result_json.h"
#include "engine/common/check.h"

namespace gcmoe::client {
namespace {

std::string value_text(double value) {
  return std::isinf(value) ? "inf" : fmt::format("{}", value);
}

nlohmann::json latency_json(BenchMetrics const& metrics, std::vector<double> const& ps) {
  nlohmann::json j;
  for (auto const& [name, summary] : metrics.latency) {
    j[fmt::format("mean_{}_ms", name)] = summary.mean_ms;
    j[fmt::format("median_{}_ms", name)] = summary.median_ms;
    for (std::size_t i = 0; i < summary.percentiles_ms.size() && i < ps.size(); ++i) {
      j[fmt::format("p{}_{}_ms", percentile_label(summary.percentiles_ms[i].first), name)] =
          summary.percentiles_ms[i].second;
    }
  }
  return j;
}

}  // namespace

StatusOr<std::vector<double>> parse_sweep_values(std::string const& text, SweepAxis axis) {
  std::vector<double> values;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    GCMOE_CHECK_ARG(!item.empty(), "sweep list '{}' has an empty item", text);
    double value = 0.0;
    if (item == "inf") {
      value = std::numeric_limits<double>::infinity();
    } else {
      char const* const end = item.data() + item.size();
      auto const [ptr, error] = std::from_chars(item.data(), end, value);
      GCMOE_CHECK_ARG(error == std::errc() && ptr == end && std::isfinite(value),
                      "sweep item '{}' is not a number", item);
    }
    switch (axis) {
      case SweepAxis::kMaxConcurrency:
        GCMOE_CHECK_ARG(std::isfinite(value) && value >= 1.0 && value == std::floor(value),
                        "--sweep-max-concurrency item '{}' is not an integer >= 1", item);
        break;
      case SweepAxis::kRequestRate:
        GCMOE_CHECK_ARG(value > 0.0, "--sweep-request-rate item '{}' is not > 0 (or inf)", item);
        break;
    }
    values.push_back(value);
  }
  GCMOE_CHECK_ARG(!values.empty(), "sweep list is empty");
  return values;
}

std::string sweep_point_name(std::string const& stem, SweepAxis axis, double value) {
  switch (axis) {
    case SweepAxis::kMaxConcurrency:
      return fmt::format("{}-c{}", stem, static_cast<std::int64_t>(value));
    case SweepAxis::kRequestRate:
      return fmt::format("{}-r{}", stem, value_text(value));
  }
  return stem;
}

Status run_sweep(BenchConfig const& config, SweepSpec const& spec) {
  std::string const stem =
      config.result_filename.empty()
          ? std::string("gcmoe-sweep")
          : std::filesystem::path(config.result_filename).replace_extension().string();
  nlohmann::json points = nlohmann::json::array();
  std::size_t failed_points = 0;
  for (double const value : spec.values) {
    BenchConfig point = config;
    point.save_result = true;
    std::string const name = sweep_point_name(stem, spec.axis, value);
    point.result_filename = name + ".json";
    nlohmann::json entry;
    entry["file"] = point.result_filename;
    switch (spec.axis) {
      case SweepAxis::kMaxConcurrency:
        point.max_concurrency = static_cast<std::int64_t>(value);
        entry["max_concurrency"] = *point.max_concurrency;
        entry["request_rate"] = std::isinf(point.request_rate) ? nlohmann::json("inf")
                                                               : nlohmann::json(point.request_rate);
        break;
      case SweepAxis::kRequestRate:
        point.request_rate = value;
        entry["request_rate"] = std::isinf(value) ? nlohmann::json("inf") : nlohmann::json(value);
        entry["max_concurrency"] = point.max_concurrency ? nlohmann::json(*point.max_concurrency)
                                                         : nlohmann::json(nullptr);
        break;
    }
    spdlog::info("sweep: point {}", name);
    StatusOr<BenchReport> const report = run_bench(point);
    if (!report.ok()) {
      ++failed_points;
      spdlog::error("sweep: point {} failed: {}", name, report.status().to_string());
      entry["error"] = report.status().to_string();
      points.push_back(entry);
      continue;
    }
    BenchMetrics const& m = report->metrics;
    entry["completed"] = m.completed;
    entry["failed"] = m.failed;
    entry["failures_by_code"] = m.failures_by_code;
    entry["duration"] = m.duration_s;
    entry["request_throughput"] = m.request_throughput;
    entry["output_throughput"] = m.output_throughput;
    entry["total_token_throughput"] = m.total_token_throughput;
    entry["request_goodput"] =
        m.request_goodput ? nlohmann::json(*m.request_goodput) : nlohmann::json(nullptr);
    entry.update(latency_json(m, config.metric_percentiles));
    points.push_back(entry);
  }
  nlohmann::json summary;
  summary["axis"] = spec.axis == SweepAxis::kMaxConcurrency ? "max_concurrency" : "request_rate";
  summary["target"] = config.target;
  summary["points"] = points;
  std::filesystem::path const path =
      std::filesystem::path(config.result_dir) / (stem + "-sweep.json");
  GCMOE_RETURN_IF_ERROR(write_json_file(path, summary));
  spdlog::info("sweep: {} points, summary in {}", spec.values.size(), path.string());
  if (failed_points == spec.values.size()) {
    return failed_precondition_error(
        fmt::format("every one of the {} sweep points failed", failed_points));
  }
  return Status();
}

}  // namespace gcmoe::client
