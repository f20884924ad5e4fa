// Percentiles (numpy's linear interpolation), vLLM's metric definitions and goodput, checked
// against values computed by hand.
#include <cmath>

#include "client/bench_metrics.h"
#include "client/goodput.h"
#include "client/percentiles.h"
#include "tests/support/catch.h"

namespace gcmoe::client {
namespace {

TEST_CASE("Percentiles interpolate linearly between closest ranks (np.percentile)") {
  std::vector<double> const v = {4.0, 1.0, 3.0, 2.0};  // unsorted on purpose
  CHECK(percentile(v, 0.0) == 1.0);
  CHECK(percentile(v, 100.0) == 4.0);
  CHECK(percentile(v, 50.0) == Approx(2.5));
  CHECK(percentile(v, 25.0) == Approx(1.75));  // rank 0.75
  CHECK(percentile(v, 99.0) == Approx(3.97));  // rank 2.97
  CHECK(percentile(v, 90.0) == Approx(3.7));   // rank 2.7
  CHECK(median(v) == Approx(2.5));
  CHECK(mean(v) == Approx(2.5));
  CHECK(population_stddev(v) == Approx(std::sqrt(1.25)));
  CHECK(percentile({7.0}, 99.0) == 7.0);
  CHECK(percentile({}, 99.0) == 0.0);
  CHECK(mean({}) == 0.0);
  CHECK(population_stddev({}) == 0.0);
}

RequestOutcome ok_request(std::int64_t index, std::int64_t prompt, double start, double ttft,
                          std::vector<double> itls, std::int64_t tokens) {
  RequestOutcome o;
  o.index = index;
  o.success = true;
  o.prompt_tokens = prompt;
  o.start_s = start;
  o.ttft_s = ttft;
  o.itl_s = std::move(itls);
  o.output_tokens = tokens;
  double e2e = ttft;
  for (double const gap : o.itl_s) {
    e2e += gap;
  }
  o.e2el_s = e2e;
  o.chunks.push_back({start + ttft, 1});
  double at = start + ttft;
  for (double const gap : o.itl_s) {
    at += gap;
    o.chunks.push_back(
        {at, static_cast<std::uint32_t>(tokens - 1) / static_cast<std::uint32_t>(o.itl_s.size())});
  }
  return o;
}

RequestOutcome failed_request(std::int64_t index, std::string code, double start) {
  RequestOutcome o;
  o.index = index;
  o.success = false;
  o.status_code = std::move(code);
  o.error = "refused";
  o.prompt_tokens = 100;
  o.start_s = start;
  o.e2el_s = 0.01;
  return o;
}

std::vector<RequestOutcome> sample_run() {
  // A: prompt 5, ttft 100 ms, 9 chunks of 1 token 90 ms apart -> 10 tokens, e2e 0.91 s,
  //    TPOT (0.91 - 0.1) / 9 = 90 ms.
  // B: prompt 7, ttft 200 ms, 1 token -> e2e 0.2 s, no TPOT.
  // C, D: refused.
  return {ok_request(0, 5, 0.0, 0.1, std::vector<double>(9, 0.09), 10),
          ok_request(1, 7, 0.5, 0.2, {}, 1), failed_request(2, "RESOURCE_EXHAUSTED", 0.6),
          failed_request(3, "RESOURCE_EXHAUSTED", 0.7), failed_request(4, "UNAVAILABLE", 0.8)};
}

TEST_CASE("Metrics follow vLLM's definitions") {
  BenchMetrics const m = compute_metrics(sample_run(), 2.0, {}, {50.0, 99.0});
  CHECK(m.completed == 2);
  CHECK(m.failed == 3);
  CHECK(m.failures_by_code.at("RESOURCE_EXHAUSTED") == 2);
  CHECK(m.failures_by_code.at("UNAVAILABLE") == 1);
  CHECK(m.total_input_tokens == 12);  // completed requests only
  CHECK(m.total_output_tokens == 11);
  CHECK(m.request_throughput == Approx(1.0));
  CHECK(m.output_throughput == Approx(5.5));
  CHECK(m.total_token_throughput == Approx(11.5));
  CHECK_FALSE(m.request_goodput.has_value());

  MetricSummary const& ttft = m.latency.at("ttft");
  CHECK(ttft.mean_ms == Approx(150.0));
  CHECK(ttft.median_ms == Approx(150.0));
  CHECK(ttft.std_ms == Approx(50.0));
  CHECK(ttft.percentiles_ms.at(1).first == 99.0);
  CHECK(ttft.percentiles_ms.at(1).second == Approx(199.0));  // 100 + 0.99 * 100

  MetricSummary const& tpot = m.latency.at("tpot");  // only A has two tokens or more
  CHECK(tpot.mean_ms == Approx(90.0));
  CHECK(tpot.std_ms == Approx(0.0).margin(1e-9));

  MetricSummary const& itl = m.latency.at("itl");  // A's nine gaps
  CHECK(itl.mean_ms == Approx(90.0));
  CHECK(itl.percentiles_ms.at(0).second == Approx(90.0));

  MetricSummary const& e2el = m.latency.at("e2el");
  CHECK(e2el.mean_ms == Approx(555.0));  // (910 + 200) / 2
  CHECK(e2el.std_ms == Approx(355.0));

  // A runs [0, 0.91], B [0.5, 0.7], C D E start at 0.6, 0.7, 0.8 for 10 ms: at 0.605 A, B, C.
  CHECK(m.max_concurrent_requests == 3);
  // Second 0 holds all 11 tokens of A (0.1 .. 0.91 s) and B (0.7 s).
  CHECK(m.max_output_tokens_per_s == Approx(11.0));
}

TEST_CASE("TPOT is (e2e - ttft) / (tokens - 1), undefined below two tokens") {
  RequestOutcome o;
  o.ttft_s = 0.5;
  o.e2el_s = 2.5;
  o.output_tokens = 5;
  CHECK(tpot_s(o).value() == Approx(0.5));
  o.output_tokens = 1;
  CHECK_FALSE(tpot_s(o).has_value());
}

TEST_CASE("Goodput counts completed requests meeting every objective") {
  GoodputSlo slo = parse_goodput({"ttft:150"}).value();
  BenchMetrics m = compute_metrics(sample_run(), 2.0, slo, {99.0});
  CHECK(m.request_goodput.value() == Approx(0.5));  // only A (ttft 100 ms)

  slo = parse_goodput({"ttft:250", "e2el:500"}).value();
  m = compute_metrics(sample_run(), 2.0, slo, {99.0});
  CHECK(m.request_goodput.value() == Approx(0.5));  // only B (e2e 200 ms)

  slo = parse_goodput({"tpot:89"}).value();  // A's 90 ms TPOT misses; B (one token) counts 0
  m = compute_metrics(sample_run(), 2.0, slo, {99.0});
  CHECK(m.request_goodput.value() == Approx(0.5));

  CHECK(meets_slo({}, 1e9, 1e9, 1e9));
  CHECK(meets_slo(slo, 0.0, 89.0, 0.0));
  CHECK_FALSE(meets_slo(slo, 0.0, 89.5, 0.0));
}

TEST_CASE("--goodput parsing rejects malformed items") {
  GoodputSlo const slo = parse_goodput({"ttft:500", "tpot:50.5", "e2el:10000"}).value();
  CHECK(*slo.ttft_ms == 500.0);
  CHECK(*slo.tpot_ms == 50.5);
  CHECK(*slo.e2el_ms == 10000.0);
  for (auto const& bad : std::vector<std::vector<std::string>>{{"ttft"},
                                                               {"ttft:"},
                                                               {"ttft:abc"},
                                                               {"ttft:-1"},
                                                               {"itl:5"},
                                                               {"ttft:1", "ttft:2"},
                                                               {"ttft:5ms"}}) {
    INFO(bad.front());
    CHECK(parse_goodput(bad).status().code() == StatusCode::kInvalidArgument);
  }
}

TEST_CASE("Percentile labels match vLLM's key spelling") {
  CHECK(percentile_label(99.0) == "99");
  CHECK(percentile_label(50.0) == "50");
  CHECK(percentile_label(99.9) == "99.9");
}

}  // namespace
}  // namespace gcmoe::client
