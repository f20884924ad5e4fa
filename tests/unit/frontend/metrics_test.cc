#include "server/frontend/metrics.h"

#include "tests/support/catch.h"

namespace gcmoe::frontend {
namespace {

bool has(std::string const& text, std::string const& line) {
  return text.find(line) != std::string::npos;
}

TEST_CASE("Histogram renders cumulative buckets, sum and count") {
  Histogram h({0.25, 1.0});
  h.observe(0.125);
  h.observe(0.25);  // le is inclusive
  h.observe(0.5);
  h.observe(7.0);
  std::string out;
  h.render("x_seconds", "help", out);
  CHECK(has(out, "# TYPE x_seconds histogram\n"));
  CHECK(has(out, "x_seconds_bucket{le=\"0.25\"} 2\n"));
  CHECK(has(out, "x_seconds_bucket{le=\"1\"} 3\n"));
  CHECK(has(out, "x_seconds_bucket{le=\"+Inf\"} 4\n"));
  CHECK(has(out, "x_seconds_sum 7.875\n"));
  CHECK(has(out, "x_seconds_count 4\n"));
}

TEST_CASE("ServingMetrics: vLLM's names with the gcmoe: prefix, rank gauges summed") {
  ServingMetrics m;
  m.observe_time_to_first_token(0.02);
  m.observe_inter_token_latency(0.01);
  m.observe_request(0.5, 10, 4, "length");
  m.observe_request(0.7, 3, 2, "abort");
  m.count_error("RESOURCE_EXHAUSTED");
  RankGauges a;
  a.waiting = 2;
  a.running = 3;
  a.kv_blocks_used = 10;
  a.kv_blocks_total = 100;
  a.model_steps = 7;
  a.step_seconds_sum = 0.25;
  RankGauges b = a;
  b.kv_blocks_used = 30;
  m.set_ranks({a, b});
  std::string const out = m.render();
  CHECK(has(out, "gcmoe:time_to_first_token_seconds_count 1\n"));
  CHECK(has(out, "gcmoe:inter_token_latency_seconds_count 1\n"));
  CHECK(has(out, "gcmoe:e2e_request_latency_seconds_count 2\n"));
  CHECK(has(out, "gcmoe:num_requests_running 6\n"));
  CHECK(has(out, "gcmoe:num_requests_waiting 4\n"));
  CHECK(has(out, "gcmoe:kv_cache_usage_perc 0.2\n"));
  CHECK(has(out, "gcmoe:prompt_tokens_total 13\n"));
  CHECK(has(out, "gcmoe:generation_tokens_total 6\n"));
  CHECK(has(out, "gcmoe:request_success_total{finished_reason=\"length\"} 1\n"));
  CHECK(has(out, "gcmoe:request_error_total{code=\"RESOURCE_EXHAUSTED\"} 1\n"));
  CHECK(has(out, "gcmoe:rank_steps_total{rank=\"1\"} 7\n"));
  CHECK(has(out, "gcmoe:rank_step_seconds_total{rank=\"0\"} 0.25\n"));
}

}  // namespace
}  // namespace gcmoe::frontend
