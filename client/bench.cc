#include "client/bench.h"

#include <fmt/format.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>

#include "client/arrival_schedule.h"
#include "client/bench_runner.h"
#include "client/detailed_csv.h"
#include "client/generate_stream.h"
#include "client/progress_bar.h"
#include "client/request_generator.h"
#include "client/result_json.h"
#include "client/summary_table.h"
#include "engine/common/check.h"

namespace gcmoe::client {
namespace {

constexpr auto kInfoTimeout = std::chrono::seconds(10);

std::string local_date() {
  std::time_t const now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char text[32];
  std::strftime(text, sizeof(text), "%Y%m%d-%H%M%S", &local);
  return text;
}

struct ServerModel {
  std::optional<v1::GetModelInfoResponse> info;
  grpc::Status status;
};

ServerModel fetch_model_info(v1::GenerateService::Stub& stub) {
  ServerModel model;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + kInfoTimeout);
  v1::GetModelInfoResponse response;
  model.status = stub.GetModelInfo(&context, v1::GetModelInfoRequest(), &response);
  if (model.status.ok()) {
    model.info = response;
  }
  return model;
}

std::int64_t client_streams(BenchConfig const& config) {
  return config.max_concurrency ? *config.max_concurrency : config.max_client_streams;
}

}  // namespace

Status validate_bench_config(BenchConfig const& config) {
  GCMOE_CHECK_ARG(!config.target.empty(), "--target is empty");
  GCMOE_CHECK_ARG(!config.max_concurrency || *config.max_concurrency >= 1,
                  "--max-concurrency must be >= 1, got {}", config.max_concurrency.value_or(0));
  GCMOE_CHECK_ARG(config.max_client_streams >= 1, "--max-client-streams must be >= 1");
  GCMOE_CHECK_ARG(config.duration_s || config.num_prompts >= 1, "--num-prompts must be >= 1");
  GCMOE_CHECK_ARG(!config.duration_s || *config.duration_s > 0.0, "--duration must be > 0");
  GCMOE_CHECK_ARG(config.warmup >= 0, "--warmup must be >= 0");
  GCMOE_CHECK_ARG(config.request_timeout_s > 0.0, "--request-timeout must be > 0");
  GCMOE_RETURN_IF_ERROR(
      ArrivalSchedule::create(config.request_rate, config.burstiness, config.seed).status());
  GCMOE_RETURN_IF_ERROR(
      RandomRequestGenerator::create({config.random_input_len, config.random_output_len,
                                      config.random_range_ratio, 1, config.seed})
          .status());
  for (std::string const& name : config.percentile_metrics) {
    bool const known =
        std::any_of(std::begin(kPercentileMetricNames), std::end(kPercentileMetricNames),
                    [&](char const* known_name) { return name == known_name; });
    GCMOE_CHECK_ARG(known, "--percentile-metrics: unknown metric '{}' (ttft, tpot, itl, e2el)",
                    name);
  }
  for (double const p : config.metric_percentiles) {
    GCMOE_CHECK_ARG(p > 0.0 && p < 100.0, "--metric-percentiles: {} is not in (0, 100)", p);
  }
  return Status();
}

StatusOr<BenchReport> run_bench(BenchConfig const& config, std::FILE* table_out) {
  GCMOE_RETURN_IF_ERROR(validate_bench_config(config));
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateChannel(config.target, grpc::InsecureChannelCredentials());
  auto const connect_deadline = std::chrono::system_clock::now() +
                                std::chrono::duration_cast<std::chrono::milliseconds>(
                                    std::chrono::duration<double>(config.connect_timeout_s));
  if (!channel->WaitForConnected(connect_deadline)) {
    return unavailable_error(
        fmt::format("cannot connect to {} within {} s", config.target, config.connect_timeout_s));
  }
  std::unique_ptr<v1::GenerateService::Stub> stub = v1::GenerateService::NewStub(channel);

  ServerModel const model = fetch_model_info(*stub);
  std::uint32_t vocab_size = config.vocab_size.value_or(0);
  if (vocab_size == 0) {
    if (!model.info) {
      return unavailable_error(
          fmt::format("GetModelInfo failed ({}: {}); the vocabulary size is needed for random "
                      "prompts: pass --vocab-size or wait until the server is ready",
                      grpc_code_name(model.status.error_code()), model.status.error_message()));
    }
    vocab_size = model.info->vocab_size();
  }
  if (model.info && model.info->max_context_tokens() > 0) {
    std::int64_t const longest =
        length_range(config.random_input_len, config.random_range_ratio).high +
        length_range(config.random_output_len, config.random_range_ratio).high;
    GCMOE_CHECK_ARG(longest <= model.info->max_context_tokens(),
                    "the longest request ({} prompt + output tokens) exceeds the server's context "
                    "of {} tokens: lower --random-input-len/--random-output-len",
                    longest, model.info->max_context_tokens());
  }

  GCMOE_ASSIGN_OR_RETURN(
      RandomRequestGenerator generator,
      RandomRequestGenerator::create({config.random_input_len, config.random_output_len,
                                      config.random_range_ratio, vocab_size, config.seed}));
  std::string const date = local_date();
  std::string const id_prefix = fmt::format("bench-{}-{}-", getpid(), date);

  if (config.warmup > 0) {
    spdlog::info("bench: {} warmup requests", config.warmup);
    ProgressBar warmup_progress("warmup", config.warmup, std::nullopt, config.progress);
    RunResult const warmup = run_requests(
        *stub, config, {client_streams(config), config.warmup, std::nullopt, id_prefix}, generator,
        nullptr, warmup_progress);
    std::int64_t const failed = std::count_if(warmup.outcomes.begin(), warmup.outcomes.end(),
                                              [](RequestOutcome const& o) { return !o.success; });
    if (failed > 0) {
      spdlog::warn("bench: {} of {} warmup requests failed", failed, config.warmup);
    }
  }

  GCMOE_ASSIGN_OR_RETURN(
      ArrivalSchedule schedule,
      ArrivalSchedule::create(config.request_rate, config.burstiness, config.seed));
  std::optional<std::int64_t> const count =
      config.duration_s ? std::nullopt : std::optional<std::int64_t>(config.num_prompts);
  spdlog::info("bench: {} to {}, request rate {}, burstiness {}, max concurrency {}",
               count ? fmt::format("{} requests", *count)
                     : fmt::format("requests for {} s", *config.duration_s),
               config.target, config.request_rate, config.burstiness,
               config.max_concurrency ? std::to_string(*config.max_concurrency) : "unbounded");
  ProgressBar progress("bench", count.value_or(0), config.duration_s, config.progress);
  RunResult const run =
      run_requests(*stub, config, {client_streams(config), count, config.duration_s, id_prefix},
                   generator, &schedule, progress);

  BenchReport report;
  report.metrics =
      compute_metrics(run.outcomes, run.duration_s, config.goodput, config.metric_percentiles);
  std::fputs(summary_table(config, report.metrics).c_str(), table_out);
  std::fflush(table_out);

  if (config.save_result || config.save_detailed) {
    std::filesystem::path const json_path =
        std::filesystem::path(config.result_dir) / (config.result_filename.empty()
                                                        ? default_result_filename(config, date)
                                                        : config.result_filename);
    RunInfo info;
    info.date = date;
    info.num_prompts = static_cast<std::int64_t>(run.outcomes.size());
    if (model.info) {
      info.model_type = model.info->model_type();
      info.model_path = model.info->model_path();
    }
    GCMOE_RETURN_IF_ERROR(
        write_json_file(json_path, result_json(config, info, report.metrics, run.outcomes)));
    report.result_path = json_path;
    spdlog::info("bench: results written to {}", json_path.string());
    if (config.save_detailed) {
      std::filesystem::path csv_path = json_path;
      csv_path.replace_extension(".csv");
      GCMOE_RETURN_IF_ERROR(write_detailed_csv(csv_path, run.outcomes));
      report.detailed_path = csv_path;
      spdlog::info("bench: per-request rows written to {}", csv_path.string());
    }
  }

  if (report.metrics.completed == 0 && !run.outcomes.empty()) {
    RequestOutcome const& first = run.outcomes.front();
    return failed_precondition_error(
        fmt::format("not one of {} requests completed; first error {}: {}", run.outcomes.size(),
                    first.status_code, first.error));
  }
  return report;
}

}  // namespace gcmoe::client
