// `gcmoe bench`: the load tester (client/), with the flag names of `vllm bench serve` so results
// sit next to published ones. One run, or a sweep over --sweep-max-concurrency /
// --sweep-request-rate values (one JSON per point plus a summary; client/plot.py draws them).
// --spawn-serve runs it self-contained against a `gcmoe serve` child on a free local port.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "client/bench.h"
#include "client/goodput.h"
#include "client/local_server.h"
#include "client/sweep.h"
#include "engine/common/check.h"
#include "server/cli/command.h"

namespace gcmoe::cli {
namespace {

struct BenchFlags {
  client::BenchConfig config;
  std::string request_rate = "inf";
  std::int64_t max_concurrency = 0;
  double duration_s = 0.0;
  std::vector<std::string> goodput;
  std::string percentile_metrics = "ttft,tpot,itl,e2el";
  std::string metric_percentiles = "99";
  std::uint32_t vocab_size = 0;
  float temperature = 0.0f;
  std::int32_t top_k = 0;
  float top_p = 1.0f;
  bool disable_progress = false;
  std::string sweep_concurrency;
  std::string sweep_rate;
  bool spawn_serve = false;
  std::string spawn_serve_args;
  double spawn_timeout_s = 600.0;
};

// "a, b,c" -> {"a", "b", "c"}: items trimmed of spaces, empty items dropped.
std::vector<std::string> split_commas(std::string const& text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t const comma = text.find(',', start);
    std::size_t const end = comma == std::string::npos ? text.size() : comma;
    std::string item = text.substr(start, end - start);
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (!item.empty()) {
      items.push_back(item);
    }
    if (comma == std::string::npos) {
      break;
    }
    start = comma + 1;
  }
  return items;
}

// One number > 0 (or "inf" when `allow_inf`); INVALID_ARGUMENT naming `flag` otherwise.
StatusOr<double> parse_positive(std::string const& text, char const* flag, bool allow_inf) {
  StatusOr<std::vector<double>> const values =
      client::parse_sweep_values(text, client::SweepAxis::kRequestRate);
  if (!values.ok() || values->size() != 1 || (!allow_inf && std::isinf(values->front()))) {
    return invalid_argument_error(
        fmt::format("{}: '{}' is not a number > 0{}", flag, text, allow_inf ? " or inf" : ""));
  }
  return values->front();
}

// Turns the parsed flags into the BenchConfig (the parts CLI11 cannot fill directly).
Status finish_config(BenchFlags& flags, CLI::App const& sub) {
  client::BenchConfig& c = flags.config;
  GCMOE_ASSIGN_OR_RETURN(c.request_rate,
                         parse_positive(flags.request_rate, "--request-rate", true));
  if (sub.count("--max-concurrency") > 0) {
    c.max_concurrency = flags.max_concurrency;
  }
  if (sub.count("--duration") > 0) {
    c.duration_s = flags.duration_s;
  }
  GCMOE_ASSIGN_OR_RETURN(c.goodput, client::parse_goodput(flags.goodput));
  c.percentile_metrics = split_commas(flags.percentile_metrics);
  c.metric_percentiles.clear();
  for (std::string const& item : split_commas(flags.metric_percentiles)) {
    GCMOE_ASSIGN_OR_RETURN(double const value, parse_positive(item, "--metric-percentiles", false));
    c.metric_percentiles.push_back(value);
  }
  if (sub.count("--vocab-size") > 0) {
    c.vocab_size = flags.vocab_size;
  }
  if (sub.count("--temperature") > 0) {
    c.sampling.temperature = flags.temperature;
  }
  if (sub.count("--top-k") > 0) {
    c.sampling.top_k = flags.top_k;
  }
  if (sub.count("--top-p") > 0) {
    c.sampling.top_p = flags.top_p;
  }
  c.progress = !flags.disable_progress;
  return client::validate_bench_config(c);
}

Status run_bench_command(BenchFlags& flags, CLI::App const& sub) {
  GCMOE_RETURN_IF_ERROR(finish_config(flags, sub));
  std::unique_ptr<client::LocalServer> local;
  if (flags.spawn_serve) {
    std::vector<std::string> args;
    std::istringstream words(flags.spawn_serve_args);
    for (std::string word; words >> word;) {
      args.push_back(word);
    }
    GCMOE_ASSIGN_OR_RETURN(
        local, client::LocalServer::start(
                   client::current_executable(), args,
                   std::chrono::seconds(static_cast<std::int64_t>(flags.spawn_timeout_s))));
    flags.config.target = local->target();
  }
  GCMOE_CHECK_ARG(flags.sweep_concurrency.empty() || flags.sweep_rate.empty(),
                  "--sweep-max-concurrency and --sweep-request-rate exclude each other");
  if (!flags.sweep_concurrency.empty() || !flags.sweep_rate.empty()) {
    client::SweepSpec spec;
    spec.axis = flags.sweep_concurrency.empty() ? client::SweepAxis::kRequestRate
                                                : client::SweepAxis::kMaxConcurrency;
    GCMOE_ASSIGN_OR_RETURN(spec.values, client::parse_sweep_values(flags.sweep_concurrency.empty()
                                                                       ? flags.sweep_rate
                                                                       : flags.sweep_concurrency,
                                                                   spec.axis));
    return client::run_sweep(flags.config, spec);
  }
  return client::run_bench(flags.config).status();
}

}  // namespace

CommandRunner add_bench_command(CLI::App& app) {
  auto flags = std::make_shared<BenchFlags>();
  client::BenchConfig& c = flags->config;
  CLI::App* sub = app.add_subcommand(
      "bench", "Load-test a gcmoe server over gRPC (flags and result JSON of `vllm bench serve`)");
  auto* target =
      sub->add_option("--target", c.target, "host:port of `gcmoe serve`")->capture_default_str();
  sub->add_flag("--spawn-serve", flags->spawn_serve,
                "Start `gcmoe serve` on a free localhost port (the embedded default model unless "
                "--spawn-serve-args names one), bench it, stop it")
      ->excludes(target);
  sub->add_option("--spawn-serve-args", flags->spawn_serve_args,
                  "Extra `gcmoe serve` flags for --spawn-serve, e.g. \"--ranks 2 --backend cpu\"");
  sub->add_option("--spawn-timeout", flags->spawn_timeout_s,
                  "Seconds the spawned server gets to become ready")
      ->capture_default_str();
  sub->add_option("--max-concurrency", flags->max_concurrency,
                  "Requests in flight at most (default: unbounded, up to --max-client-streams)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--request-rate", flags->request_rate,
                  "Requests per second (Poisson arrivals; inf = all at once)")
      ->capture_default_str();
  sub->add_option("--burstiness", c.burstiness,
                  "Gamma shape of inter-arrival times: 1 = Poisson, < 1 burstier, > 1 steadier")
      ->capture_default_str();
  auto* num_prompts =
      sub->add_option("--num-prompts", c.num_prompts, "Requests to send")->capture_default_str();
  sub->add_option("--duration", flags->duration_s,
                  "Send requests for this many seconds instead of --num-prompts")
      ->excludes(num_prompts);
  sub->add_option("--random-input-len", c.random_input_len, "Prompt tokens per request")
      ->capture_default_str();
  sub->add_option("--random-output-len", c.random_output_len, "max_new_tokens per request")
      ->capture_default_str();
  sub->add_option("--random-range-ratio", c.random_range_ratio,
                  "Lengths uniform in [len*(1-r), len*(1+r)]")
      ->capture_default_str();
  sub->add_flag("--ignore-eos", c.ignore_eos, "Generate max_new_tokens even past EOS");
  sub->add_option("--seed", c.seed, "Seed of lengths, prompts and arrivals")->capture_default_str();
  sub->add_option("--warmup", c.warmup, "Requests sent (and not measured) first")
      ->capture_default_str();
  sub->add_option("--goodput", flags->goodput,
                  "Objectives for goodput, e.g. --goodput ttft:500 tpot:50 e2el:10000 (ms)");
  sub->add_option("--percentile-metrics", flags->percentile_metrics,
                  "Comma-separated metrics to report percentiles of (ttft,tpot,itl,e2el)")
      ->capture_default_str();
  sub->add_option("--metric-percentiles", flags->metric_percentiles,
                  "Comma-separated percentiles, e.g. 50,90,99")
      ->capture_default_str();
  sub->add_option("--vocab-size", flags->vocab_size,
                  "Token ids are drawn below this (default: GetModelInfo's vocab_size)");
  sub->add_option("--temperature", flags->temperature, "Sampling temperature (server default)");
  sub->add_option("--top-k", flags->top_k, "Top-k (server default)");
  sub->add_option("--top-p", flags->top_p, "Top-p (server default)");
  sub->add_option("--connect-timeout", c.connect_timeout_s, "Seconds to wait for the target")
      ->capture_default_str();
  sub->add_option("--request-timeout", c.request_timeout_s, "gRPC deadline per request (s)")
      ->capture_default_str();
  sub->add_option("--max-client-streams", c.max_client_streams,
                  "Client threads when --max-concurrency is unset")
      ->capture_default_str();
  sub->add_flag("--disable-tqdm", flags->disable_progress, "No progress bar on stderr");
  sub->add_option("--label", c.label, "Free text stored in the result JSON");
  sub->add_flag("--save-result", c.save_result, "Write the result JSON");
  sub->add_flag("--save-detailed", c.save_detailed,
                "Also per-request arrays in the JSON and a per-request CSV beside it");
  sub->add_option("--result-dir", c.result_dir, "Folder of the result files")
      ->capture_default_str();
  sub->add_option("--result-filename", c.result_filename,
                  "Result JSON name (default gcmoe-<rate>qps[-concurrency<N>]-<date>.json)");
  sub->add_option("--sweep-max-concurrency", flags->sweep_concurrency,
                  "Sweep: run once per concurrency, e.g. 1,2,4,8 (files <stem>-c<N>.json)");
  sub->add_option("--sweep-request-rate", flags->sweep_rate,
                  "Sweep: run once per rate, e.g. 1,2,4,inf (files <stem>-r<R>.json)");
  return [flags, sub] { return run_bench_command(*flags, *sub); };
}

}  // namespace gcmoe::cli
