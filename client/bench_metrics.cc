#include "client/bench_metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "client/goodput.h"
#include "client/percentiles.h"

namespace gcmoe::client {
namespace {

MetricSummary summarize_ms(std::vector<double> const& seconds, std::vector<double> const& ps) {
  std::vector<double> ms;
  ms.reserve(seconds.size());
  for (double const s : seconds) {
    ms.push_back(s * 1000.0);
  }
  MetricSummary summary;
  summary.mean_ms = mean(ms);
  summary.median_ms = median(ms);
  summary.std_ms = population_stddev(ms);
  for (double const p : ps) {
    summary.percentiles_ms.emplace_back(p, percentile(ms, p));
  }
  return summary;
}

// The most requests in flight at once: +1 at each send, −1 at each end (ends first on ties).
std::int64_t peak_concurrency(std::vector<RequestOutcome> const& outcomes) {
  std::vector<std::pair<double, int>> events;
  for (RequestOutcome const& o : outcomes) {
    events.emplace_back(o.start_s, +1);
    events.emplace_back(o.start_s + o.e2el_s, -1);
  }
  std::sort(events.begin(), events.end());
  std::int64_t current = 0;
  std::int64_t peak = 0;
  for (auto const& [at, delta] : events) {
    current += delta;
    peak = std::max(peak, current);
  }
  return peak;
}

// Output tokens per whole second of the run (chunks binned by arrival time); the busiest bin.
double peak_output_rate(std::vector<RequestOutcome> const& outcomes) {
  std::map<std::int64_t, double> per_second;
  for (RequestOutcome const& o : outcomes) {
    for (ChunkArrival const& chunk : o.chunks) {
      per_second[static_cast<std::int64_t>(std::floor(chunk.at_s))] += chunk.tokens;
    }
  }
  double peak = 0.0;
  for (auto const& [second, tokens] : per_second) {
    peak = std::max(peak, tokens);
  }
  return peak;
}

}  // namespace

std::optional<double> tpot_s(RequestOutcome const& outcome) {
  if (outcome.output_tokens < 2) {
    return std::nullopt;
  }
  return (outcome.e2el_s - outcome.ttft_s) / static_cast<double>(outcome.output_tokens - 1);
}

std::string percentile_label(double p) {
  if (p == std::floor(p)) {
    return fmt::format("{}", static_cast<std::int64_t>(p));
  }
  return fmt::format("{}", p);
}

BenchMetrics compute_metrics(std::vector<RequestOutcome> const& outcomes, double duration_s,
                             GoodputSlo const& goodput,
                             std::vector<double> const& metric_percentiles) {
  BenchMetrics m;
  m.duration_s = duration_s;
  std::vector<double> ttfts;
  std::vector<double> tpots;
  std::vector<double> itls;
  std::vector<double> e2els;
  std::int64_t good = 0;
  for (RequestOutcome const& o : outcomes) {
    if (!o.success) {
      ++m.failed;
      ++m.failures_by_code[o.status_code];
      continue;
    }
    ++m.completed;
    m.total_input_tokens += o.prompt_tokens;
    m.total_output_tokens += o.output_tokens;
    ttfts.push_back(o.ttft_s);
    e2els.push_back(o.e2el_s);
    itls.insert(itls.end(), o.itl_s.begin(), o.itl_s.end());
    std::optional<double> const tpot = tpot_s(o);
    if (tpot) {
      tpots.push_back(*tpot);
    }
    if (goodput.any() &&
        meets_slo(goodput, o.ttft_s * 1000.0, tpot.value_or(0.0) * 1000.0, o.e2el_s * 1000.0)) {
      ++good;
    }
  }
  if (duration_s > 0.0) {
    m.request_throughput = static_cast<double>(m.completed) / duration_s;
    m.output_throughput = static_cast<double>(m.total_output_tokens) / duration_s;
    m.total_token_throughput =
        static_cast<double>(m.total_input_tokens + m.total_output_tokens) / duration_s;
    if (goodput.any()) {
      m.request_goodput = static_cast<double>(good) / duration_s;
    }
  } else if (goodput.any()) {
    m.request_goodput = 0.0;
  }
  m.max_output_tokens_per_s = peak_output_rate(outcomes);
  m.max_concurrent_requests = peak_concurrency(outcomes);
  m.latency["ttft"] = summarize_ms(ttfts, metric_percentiles);
  m.latency["tpot"] = summarize_ms(tpots, metric_percentiles);
  m.latency["itl"] = summarize_ms(itls, metric_percentiles);
  m.latency["e2el"] = summarize_ms(e2els, metric_percentiles);
  return m;
}

}  // namespace gcmoe::client
