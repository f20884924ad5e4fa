// The result JSON carries vLLM's key names; the CSV one row per request; the summary table
// vLLM's rows; the request generator the random dataset's lengths.
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "client/bench_metrics.h"
#include "client/detailed_csv.h"
#include "client/health_check.h"
#include "client/progress_bar.h"
#include "client/request_generator.h"
#include "client/result_json.h"
#include "client/summary_table.h"
#include "client/sweep.h"
#include "tests/support/catch.h"

namespace gcmoe::client {
namespace {

std::vector<RequestOutcome> two_outcomes() {
  RequestOutcome a;
  a.index = 0;
  a.request_id = "bench-0";
  a.success = true;
  a.prompt_tokens = 4;
  a.output_tokens = 3;
  a.ttft_s = 0.01;
  a.itl_s = {0.02, 0.03};
  a.e2el_s = 0.06;
  a.finish_reason = "LENGTH";
  RequestOutcome b;
  b.index = 1;
  b.request_id = "bench-\"1\"";
  b.success = false;
  b.status_code = "RESOURCE_EXHAUSTED";
  b.error = "queue full, 2 waiting";
  b.prompt_tokens = 4;
  return {a, b};
}

TEST_CASE("Result JSON uses vLLM's key names") {
  BenchConfig config;
  config.metric_percentiles = {50.0, 99.0, 99.9};
  config.max_concurrency = 4;
  std::vector<RequestOutcome> const outcomes = two_outcomes();
  BenchMetrics const m = compute_metrics(outcomes, 1.0, {}, config.metric_percentiles);
  nlohmann::json const j =
      result_json(config, {"20261129-120000", "glm_moe_dsa", "/m", 2}, m, outcomes);
  for (char const* key :
       {"date", "backend", "model_id", "num_prompts", "request_rate", "burstiness",
        "max_concurrency", "duration", "completed", "failed", "total_input_tokens",
        "total_output_tokens", "request_throughput", "request_goodput", "output_throughput",
        "total_token_throughput", "max_output_tokens_per_s", "max_concurrent_requests",
        "failures_by_code"}) {
    INFO(key);
    CHECK(j.contains(key));
  }
  for (char const* metric : {"ttft", "tpot", "itl", "e2el"}) {
    for (char const* stat : {"mean", "median", "std", "p50", "p99", "p99.9"}) {
      std::string const key = std::string(stat) + "_" + metric + "_ms";
      INFO(key);
      CHECK(j.contains(key));
    }
  }
  CHECK(j["request_rate"] == "inf");
  CHECK(j["max_concurrency"] == 4);
  CHECK(j["completed"] == 1);
  CHECK(j["failed"] == 1);
  CHECK(j["failures_by_code"]["RESOURCE_EXHAUSTED"] == 1);
  CHECK(j["request_goodput"].is_null());
  CHECK(j["mean_ttft_ms"].get<double>() == Approx(10.0));
  CHECK(j["mean_tpot_ms"].get<double>() == Approx(25.0));  // (60 - 10) / 2
  CHECK(j["p99_itl_ms"].get<double>() == Approx(29.9));    // 20 + 0.99 * 10
  CHECK_FALSE(j.contains("ttfts"));

  config.percentile_metrics = {"ttft"};
  config.save_detailed = true;
  config.request_rate = 2.5;
  nlohmann::json const k = result_json(config, {}, m, outcomes);
  CHECK(k.contains("p99_ttft_ms"));
  CHECK_FALSE(k.contains("p99_tpot_ms"));
  CHECK(k["request_rate"] == 2.5);
  CHECK(k["ttfts"].size() == 2);
  CHECK(k["itls"][0].size() == 2);
  CHECK(k["errors"][1] == "RESOURCE_EXHAUSTED: queue full, 2 waiting");

  CHECK(default_result_filename(config, "D") == "gcmoe-2.5qps-concurrency4-D.json");
  config.max_concurrency.reset();
  config.request_rate = std::numeric_limits<double>::infinity();
  CHECK(default_result_filename(config, "D") == "gcmoe-infqps-D.json");
}

TEST_CASE("Result files are written where asked") {
  std::filesystem::path const dir =
      std::filesystem::temp_directory_path() / ("gcmoe-result-test-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  REQUIRE(write_json_file(dir / "sub" / "r.json", nlohmann::json{{"completed", 3}}).ok());
  std::ifstream in(dir / "sub" / "r.json");
  CHECK(nlohmann::json::parse(in)["completed"] == 3);
  REQUIRE(write_detailed_csv(dir / "r.csv", two_outcomes()).ok());
  std::ifstream csv_in(dir / "r.csv");
  std::stringstream text;
  text << csv_in.rdbuf();
  std::filesystem::remove_all(dir);

  std::string const csv = text.str();
  CHECK(csv.rfind("index,request_id,status,start_ms,prompt_tokens,output_tokens,ttft_ms,", 0) == 0);
  CHECK(csv.find("0,\"bench-0\",OK,0.000,4,3,10.000,25.000,60.000,25.000,LENGTH,\"\"\n") !=
        std::string::npos);
  CHECK(csv.find("1,\"bench-\"\"1\"\"\",RESOURCE_EXHAUSTED,") != std::string::npos);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 3);
}

TEST_CASE("Summary table has vLLM's rows and the failures by code") {
  BenchConfig config;
  BenchMetrics const m = compute_metrics(two_outcomes(), 1.0, {}, {99.0});
  std::string const table = summary_table(config, m);
  CHECK(table.rfind("============ Serving Benchmark Result ============\n", 0) == 0);
  for (char const* row :
       {"Successful requests:                     1", "Failed requests:                         1",
        "  RESOURCE_EXHAUSTED:", "Benchmark duration (s):                  1.00",
        "Request throughput (req/s):", "Output token throughput (tok/s):         3.00",
        "---------------Time to First Token----------------", "Mean TTFT (ms):", "P99 TPOT (ms):",
        "Median ITL (ms):", "----------------End-to-end Latency----------------"}) {
    INFO(row);
    CHECK(table.find(row) != std::string::npos);
  }
}

TEST_CASE("Random requests: lengths in [len(1-r), len(1+r)], ids below the vocabulary") {
  RandomRequestGenerator g = RandomRequestGenerator::create({100, 20, 0.5, 50, 3}).value();
  for (int i = 0; i < 200; ++i) {
    BenchRequest const r = g.next();
    CHECK(r.index == i);
    CHECK(r.prompt_token_ids.size() >= 50);
    CHECK(r.prompt_token_ids.size() <= 150);
    CHECK(r.max_new_tokens >= 10);
    CHECK(r.max_new_tokens <= 30);
    for (std::uint32_t const id : r.prompt_token_ids) {
      CHECK(id < 50);
    }
  }
  RandomRequestGenerator exact = RandomRequestGenerator::create({64, 8, 0.0, 1000, 0}).value();
  BenchRequest const e = exact.next();
  CHECK(e.prompt_token_ids.size() == 64);
  CHECK(e.max_new_tokens == 8);
  RandomRequestGenerator again = RandomRequestGenerator::create({64, 8, 0.0, 1000, 0}).value();
  CHECK(again.next().prompt_token_ids == e.prompt_token_ids);

  CHECK(length_range(1, 0.9).low == 1);
  CHECK(length_range(10, 0.25).low == 7);
  CHECK(length_range(10, 0.25).high == 12);
  CHECK(RandomRequestGenerator::create({0, 8, 0.0, 10, 0}).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(RandomRequestGenerator::create({8, 8, 1.0, 10, 0}).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(RandomRequestGenerator::create({8, 8, 0.0, 0, 0}).status().code() ==
        StatusCode::kInvalidArgument);
}

TEST_CASE("Sweep lists parse per axis and name their files") {
  CHECK(parse_sweep_values("1,2,4", SweepAxis::kMaxConcurrency).value() ==
        std::vector<double>{1, 2, 4});
  std::vector<double> const rates = parse_sweep_values("0.5,inf", SweepAxis::kRequestRate).value();
  CHECK(rates.at(0) == 0.5);
  CHECK(std::isinf(rates.at(1)));
  for (char const* bad : {"", "1,,2", "0", "1.5", "x", "inf"}) {
    INFO(bad);
    CHECK_FALSE(parse_sweep_values(bad, SweepAxis::kMaxConcurrency).ok());
  }
  CHECK_FALSE(parse_sweep_values("0", SweepAxis::kRequestRate).ok());
  CHECK_FALSE(parse_sweep_values("-1", SweepAxis::kRequestRate).ok());
  CHECK(sweep_point_name("s", SweepAxis::kMaxConcurrency, 8) == "s-c8");
  CHECK(sweep_point_name("s", SweepAxis::kRequestRate, 0.5) == "s-r0.5");
  CHECK(sweep_point_name("s", SweepAxis::kRequestRate, rates.at(1)) == "s-rinf");
}

TEST_CASE("Health check messages round-trip the wire format") {
  CHECK(encode_health_request("") == "");
  CHECK(encode_health_request("ab") == std::string("\x0a\x02"
                                                   "ab",
                                                   4));
  CHECK(decode_health_response("").value() == HealthState::kUnknown);
  CHECK(decode_health_response(std::string("\x08\x01", 2)).value() == HealthState::kServing);
  CHECK(decode_health_response(std::string("\x08\x02", 2)).value() == HealthState::kNotServing);
  CHECK_FALSE(decode_health_response(std::string("\x08\x09", 2)).ok());
  CHECK_FALSE(decode_health_response(std::string("\x08", 1)).ok());
  CHECK_FALSE(decode_health_response(std::string("\x12\x00", 2)).ok());
}

TEST_CASE("Progress line: position, bar, in flight, failures, rate") {
  std::string const line = progress_line({5, 1, 2}, 10, std::nullopt, 2.0);
  CHECK(line ==
        " 50% [###############...............] 5/10 | 2 in flight | 1 failed | 2.0 s | "
        "2.50 req/s");
  std::string const timed = progress_line({3, 0, 0}, 0, 4.0, 1.0);
  CHECK(timed.rfind(" 25% [#######", 0) == 0);
  CHECK(timed.find("3 done") != std::string::npos);
  CHECK(progress_line({12, 0, 0}, 10, std::nullopt, 1.0).rfind("100% [", 0) == 0);
}

}  // namespace
}  // namespace gcmoe::client
