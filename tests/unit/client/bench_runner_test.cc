// The load tester against an in-process fake of the public service (a test double): TTFT to
// the first token chunk, TPOT and ITL from the chunk times, the concurrency bound, failures
// counted by gRPC code under overload, and the result files.
#include "client/bench_runner.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "client/bench.h"
#include "client/sweep.h"
#include "tests/support/catch.h"
#include "tests/unit/client/fake_generate_server.h"

namespace gcmoe::client {
namespace {

BenchConfig small_config(std::string const& target) {
  BenchConfig c;
  c.target = target;
  c.num_prompts = 12;
  c.random_input_len = 16;
  c.random_output_len = 8;
  c.progress = false;
  c.metric_percentiles = {50.0, 99.0};
  return c;
}

std::filesystem::path temp_dir(char const* name) {
  auto const dir =
      std::filesystem::temp_directory_path() / (std::string(name) + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  return dir;
}

TEST_CASE("bench against a fake server: latencies come from the streamed chunks") {
  testing::FakeServerOptions options;
  options.first_token_delay = std::chrono::milliseconds(20);
  options.token_gap = std::chrono::milliseconds(5);
  testing::FakeGenerateServer server(options);
  BenchConfig config = small_config(server.address());
  config.max_concurrency = 3;
  config.warmup = 2;
  config.save_result = true;
  config.save_detailed = true;
  auto const dir = temp_dir("gcmoe-bench-test");
  config.result_dir = dir.string();
  config.result_filename = "run.json";

  std::FILE* table = std::tmpfile();
  StatusOr<BenchReport> const report = run_bench(config, table);
  REQUIRE(report.ok());
  BenchMetrics const& m = report->metrics;
  CHECK(m.completed == 12);
  CHECK(m.failed == 0);
  CHECK(m.total_output_tokens == 12 * 8);
  CHECK(m.total_input_tokens == 12 * 16);
  CHECK(server.service().requests() == 14);  // warmup included
  CHECK(server.service().peak_active() <= 3);
  CHECK(m.max_concurrent_requests <= 3);
  CHECK(m.max_concurrent_requests >= 2);
  // The fake waits 20 ms before the first token and 5 ms between tokens.
  CHECK(m.latency.at("ttft").median_ms >= 19.0);
  CHECK(m.latency.at("ttft").median_ms < 1000.0);
  CHECK(m.latency.at("tpot").median_ms >= 4.5);
  CHECK(m.latency.at("tpot").median_ms < 500.0);
  CHECK(m.latency.at("itl").median_ms >= 4.5);
  CHECK(m.latency.at("e2el").median_ms >= 19.0 + 7 * 4.5);
  CHECK(m.request_throughput > 0.0);
  CHECK(m.output_throughput == Approx(8.0 * m.request_throughput));

  std::ifstream json_in(dir / "run.json");
  nlohmann::json const j = nlohmann::json::parse(json_in);
  CHECK(j["completed"] == 12);
  CHECK(j["model_type"] == "fake");
  CHECK(j["max_concurrency"] == 3);
  CHECK(j.contains("p99_e2el_ms"));
  CHECK(j["output_lens"].size() == 12);
  CHECK(std::filesystem::exists(dir / "run.csv"));

  std::rewind(table);
  char buffer[4096] = {};
  std::size_t const n = std::fread(buffer, 1, sizeof(buffer) - 1, table);
  std::fclose(table);
  CHECK(std::string(buffer, n).find("Successful requests:                     12") !=
        std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("bench: multi-token chunks give one ITL per chunk, TTFT to the first chunk") {
  testing::FakeServerOptions options;
  options.tokens_per_chunk = 4;
  testing::FakeGenerateServer server(options);
  BenchConfig config = small_config(server.address());
  config.num_prompts = 2;
  config.random_output_len = 8;
  auto channel = grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials());
  auto stub = v1::GenerateService::NewStub(channel);
  RandomRequestGenerator generator = RandomRequestGenerator::create({4, 8, 0.0, 100, 0}).value();
  ProgressBar progress("test", 2, std::nullopt, false);
  RunResult const run =
      run_requests(*stub, config, {2, 2, std::nullopt, "chunk-"}, generator, nullptr, progress);
  REQUIRE(run.outcomes.size() == 2);
  for (RequestOutcome const& o : run.outcomes) {
    CHECK(o.success);
    CHECK(o.output_tokens == 8);
    CHECK(o.chunks.size() == 2);
    CHECK(o.itl_s.size() == 1);
    CHECK(o.finish_reason == "LENGTH");
    CHECK(o.ttft_s > 0.0);
    CHECK(o.e2el_s >= o.ttft_s);
  }
  CHECK(run.outcomes[0].request_id == "chunk-0");
}

TEST_CASE("bench under overload counts failures by gRPC code") {
  testing::FakeServerOptions options;
  options.max_active = 2;
  options.first_token_delay = std::chrono::milliseconds(50);
  testing::FakeGenerateServer server(options);
  BenchConfig config = small_config(server.address());
  config.num_prompts = 16;
  config.max_concurrency = 8;
  std::FILE* table = std::tmpfile();
  StatusOr<BenchReport> const report = run_bench(config, table);
  std::fclose(table);
  REQUIRE(report.ok());
  BenchMetrics const& m = report->metrics;
  CHECK(m.completed + m.failed == 16);
  CHECK(m.completed >= 2);
  CHECK(m.failed >= 1);
  CHECK(m.failures_by_code.at("RESOURCE_EXHAUSTED") == m.failed);
}

TEST_CASE("bench with a Poisson rate and a duration stops sending on time") {
  testing::FakeGenerateServer server({});
  BenchConfig config = small_config(server.address());
  config.duration_s = 0.5;
  config.request_rate = 40.0;
  std::FILE* table = std::tmpfile();
  auto const started = std::chrono::steady_clock::now();
  StatusOr<BenchReport> const report = run_bench(config, table);
  std::fclose(table);
  double const took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  REQUIRE(report.ok());
  // ~20 expected; a Poisson count over 0.5 s at 40/s is within [5, 45] with overwhelming odds.
  CHECK(report->metrics.completed >= 5);
  CHECK(report->metrics.completed <= 45);
  CHECK(took < 5.0);
}

TEST_CASE("sweep writes one JSON per point and a summary") {
  testing::FakeGenerateServer server({});
  BenchConfig config = small_config(server.address());
  config.num_prompts = 4;
  auto const dir = temp_dir("gcmoe-sweep-test");
  config.result_dir = dir.string();
  config.result_filename = "s.json";
  REQUIRE(run_sweep(config, {SweepAxis::kMaxConcurrency, {1, 2}}).ok());
  CHECK(std::filesystem::exists(dir / "s-c1.json"));
  CHECK(std::filesystem::exists(dir / "s-c2.json"));
  std::ifstream in(dir / "s-sweep.json");
  nlohmann::json const summary = nlohmann::json::parse(in);
  CHECK(summary["axis"] == "max_concurrency");
  REQUIRE(summary["points"].size() == 2);
  CHECK(summary["points"][1]["max_concurrency"] == 2);
  CHECK(summary["points"][1]["completed"] == 4);
  CHECK(summary["points"][0].contains("p99_ttft_ms"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("bench reports an unreachable target and bad flags clearly") {
  BenchConfig config = small_config("127.0.0.1:1");
  config.connect_timeout_s = 0.5;
  StatusOr<BenchReport> const unreachable = run_bench(config);
  CHECK(unreachable.status().code() == StatusCode::kUnavailable);
  config.percentile_metrics = {"ttft", "latency"};
  CHECK(validate_bench_config(config).code() == StatusCode::kInvalidArgument);
  config.percentile_metrics = {"ttft"};
  config.metric_percentiles = {100.0};
  CHECK(validate_bench_config(config).code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gcmoe::client
