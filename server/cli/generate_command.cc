// `gcmoe generate --target HOST:PORT --prompt-ids 1,2,3`: one request over the public API, its
// token ids printed to stdout as they stream in (space-separated, one line), then the finish
// reason, token counts and the server's timing on stderr.
#include <fmt/format.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "client/generate_stream.h"
#include "engine/common/check.h"
#include "server/cli/command.h"

namespace gcmoe::cli {
namespace {

struct GenerateFlags {
  std::string target = "localhost:50051";
  std::vector<std::uint32_t> prompt_ids;
  std::uint32_t max_new_tokens = 16;
  std::vector<std::uint32_t> stop_token_ids;
  bool ignore_eos = false;
  std::string request_id;
  double timeout_s = 300.0;
  float temperature = 1.0f;
  std::int32_t top_k = 0;
  float top_p = 1.0f;
  float min_p = 0.0f;
  float repetition_penalty = 1.0f;
  float frequency_penalty = 0.0f;
  float presence_penalty = 0.0f;
  std::uint64_t seed = 0;
};

v1::GenerateRequest make_request(GenerateFlags const& flags, CLI::App const& sub) {
  v1::GenerateRequest request;
  request.set_request_id(flags.request_id);
  request.mutable_prompt_token_ids()->Add(flags.prompt_ids.begin(), flags.prompt_ids.end());
  v1::StoppingCriteria* stopping = request.mutable_stopping();
  stopping->set_max_new_tokens(flags.max_new_tokens);
  stopping->mutable_stop_token_ids()->Add(flags.stop_token_ids.begin(), flags.stop_token_ids.end());
  stopping->set_ignore_eos(flags.ignore_eos);
  // Only the sampling flags given are sent; the rest keep the server's defaults.
  v1::SamplingParams* s = request.mutable_sampling();
  auto const given = [&](char const* name) { return sub.count(name) > 0; };
  if (given("--temperature")) {
    s->set_temperature(flags.temperature);
  }
  if (given("--top-k")) {
    s->set_top_k(flags.top_k);
  }
  if (given("--top-p")) {
    s->set_top_p(flags.top_p);
  }
  if (given("--min-p")) {
    s->set_min_p(flags.min_p);
  }
  if (given("--repetition-penalty")) {
    s->set_repetition_penalty(flags.repetition_penalty);
  }
  if (given("--frequency-penalty")) {
    s->set_frequency_penalty(flags.frequency_penalty);
  }
  if (given("--presence-penalty")) {
    s->set_presence_penalty(flags.presence_penalty);
  }
  if (given("--seed")) {
    s->set_seed(flags.seed);
  }
  return request;
}

Status run_generate(GenerateFlags const& flags, CLI::App const& sub) {
  GCMOE_CHECK_ARG(!flags.prompt_ids.empty(), "--prompt-ids is empty");
  GCMOE_CHECK_ARG(flags.max_new_tokens >= 1, "--max-new-tokens must be >= 1");
  auto channel = grpc::CreateChannel(flags.target, grpc::InsecureChannelCredentials());
  auto stub = v1::GenerateService::NewStub(channel);
  client::Clock::time_point const sent = client::Clock::now();
  std::optional<client::Clock::time_point> first;
  bool printed = false;
  client::StreamResult const result = client::run_generate_stream(
      *stub, make_request(flags, sub), std::chrono::duration<double>(flags.timeout_s),
      [&](std::span<std::uint32_t const> tokens, client::Clock::time_point at) {
        if (!first) {
          first = at;
        }
        for (std::uint32_t const id : tokens) {
          std::fprintf(stdout, "%s%u", printed ? " " : "", id);
          printed = true;
        }
        std::fflush(stdout);
      });
  if (printed) {
    std::fputc('\n', stdout);
  }
  double const e2e_ms =
      std::chrono::duration<double, std::milli>(client::Clock::now() - sent).count();
  if (!result.status.ok()) {
    return Status(static_cast<StatusCode>(result.status.error_code()),
                  fmt::format("Generate at {}: {} (after {} tokens)", flags.target,
                              result.status.error_message(), result.tokens));
  }
  v1::Finished const& f = *result.finished;
  double const ttft_ms =
      first ? std::chrono::duration<double, std::milli>(*first - sent).count() : 0.0;
  std::fprintf(stderr,
               "finished: %s, %u prompt + %u completion tokens; client ttft %.1f ms, e2e %.1f ms; "
               "server queue %.1f ms, ttft %.1f ms, decode %.1f ms\n",
               client::finish_reason_name(f.reason()).c_str(), f.prompt_tokens(),
               f.completion_tokens(), ttft_ms, e2e_ms, f.timing().queue_seconds() * 1000.0,
               f.timing().time_to_first_token_seconds() * 1000.0,
               f.timing().decode_seconds() * 1000.0);
  return Status();
}

}  // namespace

CommandRunner add_generate_command(CLI::App& app) {
  auto flags = std::make_shared<GenerateFlags>();
  CLI::App* sub =
      app.add_subcommand("generate", "Send one request and stream its token ids to the terminal");
  sub->add_option("--target", flags->target, "host:port of `gcmoe serve`")->capture_default_str();
  sub->add_option("--prompt-ids", flags->prompt_ids, "Prompt token ids, e.g. 1,2,3")
      ->required()
      ->delimiter(',');
  sub->add_option("--max-new-tokens", flags->max_new_tokens, "Tokens to generate at most")
      ->capture_default_str();
  sub->add_option("--stop-token-ids", flags->stop_token_ids, "Stop on any of these ids")
      ->delimiter(',');
  sub->add_flag("--ignore-eos", flags->ignore_eos, "Do not stop at the model's EOS token");
  sub->add_option("--request-id", flags->request_id, "Request id (default: server-assigned)");
  sub->add_option("--timeout", flags->timeout_s, "gRPC deadline in seconds")->capture_default_str();
  sub->add_option("--temperature", flags->temperature, "0 = greedy (server default 1.0)");
  sub->add_option("--top-k", flags->top_k, "0 = off");
  sub->add_option("--top-p", flags->top_p, "Nucleus mass (server default 1.0)");
  sub->add_option("--min-p", flags->min_p, "Minimum probability relative to the top token");
  sub->add_option("--repetition-penalty", flags->repetition_penalty, "1.0 = off");
  sub->add_option("--frequency-penalty", flags->frequency_penalty, "0.0 = off");
  sub->add_option("--presence-penalty", flags->presence_penalty, "0.0 = off");
  sub->add_option("--seed", flags->seed, "Deterministic sampling for this request");
  return [flags, sub] { return run_generate(*flags, *sub); };
}

}  // namespace gcmoe::cli
