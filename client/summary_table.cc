#include "client/summary_table.h"

#include <fmt/format.h>

namespace gcmoe::client {
namespace {

constexpr int kWidth = 50;

// `title` centred in kWidth columns of `fill` (Python's "{:=^50}").
std::string banner(std::string const& title, char fill) {
  std::size_t const width = static_cast<std::size_t>(kWidth);
  std::size_t const pad = title.size() < width ? width - title.size() : 0;
  std::size_t const left = pad / 2;
  return std::string(left, fill) + title + std::string(pad - left, fill) + "\n";
}

std::string row(std::string const& name, std::string const& value) {
  return fmt::format("{:<40} {:<10}\n", name, value);
}

std::string number(double value) {
  return fmt::format("{:.2f}", value);
}

struct MetricTitle {
  char const* key;
  char const* header;
  char const* short_name;
};

constexpr MetricTitle kTitles[] = {
    {"ttft", "Time to First Token", "TTFT"},
    {"tpot", "Time per Output Token (excl. 1st token)", "TPOT"},
    {"itl", "Inter-token Latency", "ITL"},
    {"e2el", "End-to-end Latency", "E2EL"},
};

}  // namespace

std::string summary_table(BenchConfig const& config, BenchMetrics const& metrics) {
  std::string out = banner(" Serving Benchmark Result ", '=');
  out += row("Successful requests:", fmt::format("{}", metrics.completed));
  out += row("Failed requests:", fmt::format("{}", metrics.failed));
  for (auto const& [code, count] : metrics.failures_by_code) {
    out += row(fmt::format("  {}:", code), fmt::format("{}", count));
  }
  if (config.max_concurrency) {
    out += row("Maximum request concurrency:", fmt::format("{}", *config.max_concurrency));
  }
  out += row("Benchmark duration (s):", number(metrics.duration_s));
  out += row("Total input tokens:", fmt::format("{}", metrics.total_input_tokens));
  out += row("Total generated tokens:", fmt::format("{}", metrics.total_output_tokens));
  out += row("Request throughput (req/s):", number(metrics.request_throughput));
  if (metrics.request_goodput) {
    out += row("Request goodput (req/s):", number(*metrics.request_goodput));
  }
  out += row("Output token throughput (tok/s):", number(metrics.output_throughput));
  out += row("Peak output token throughput (tok/s):", number(metrics.max_output_tokens_per_s));
  out += row("Peak concurrent requests:", fmt::format("{}", metrics.max_concurrent_requests));
  out += row("Total Token throughput (tok/s):", number(metrics.total_token_throughput));
  for (MetricTitle const& title : kTitles) {
    bool selected = false;
    for (std::string const& name : config.percentile_metrics) {
      selected = selected || name == title.key;
    }
    auto const found = metrics.latency.find(title.key);
    if (!selected || found == metrics.latency.end()) {
      continue;
    }
    MetricSummary const& s = found->second;
    out += banner(title.header, '-');
    out += row(fmt::format("Mean {} (ms):", title.short_name), number(s.mean_ms));
    out += row(fmt::format("Median {} (ms):", title.short_name), number(s.median_ms));
    for (auto const& [p, value] : s.percentiles_ms) {
      out += row(fmt::format("P{} {} (ms):", percentile_label(p), title.short_name), number(value));
    }
  }
  out += std::string(kWidth, '=') + "\n";
  return out;
}

}  // namespace gcmoe::client
