// `gcmoe serve`: the front-end process. Today it serves what needs no model — health (liveness
// and readiness), reflection, GetServerInfo, GetLoads, request validation — and answers
// Generate with UNAVAILABLE until model families (issue 8) load. SIGTERM or SIGINT drains: not
// ready at once, new requests refused, in-flight ones given --shutdown-timeout to end.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include "engine/common/check.h"
#include "engine/common/version.h"
#include "engine/scheduler/scheduler.h"
#include "server/cli/command.h"
#include "server/frontend/frontend_server.h"

namespace gcmoe::cli {
namespace {

struct ServeOptions {
  std::string listen = "0.0.0.0:50051";
  std::string port_file;
  std::uint32_t ranks = 1;
  std::string backend = "cpu";
  double shutdown_timeout_s = 30.0;
  scheduler::SchedulerConfig scheduler;
};

Status write_port_file(std::string const& path, int port) {
  // Written whole to a temporary name, then renamed: a reader never sees a partial number.
  std::string const tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << port << "\n";
    if (!out) {
      return internal_error(fmt::format("cannot write {}", tmp));
    }
  }
  std::error_code error;
  std::filesystem::rename(tmp, path, error);
  GCMOE_CHECK_INTERNAL(!error, "rename {} -> {}: {}", tmp, path, error.message());
  return Status();
}

Status run_serve(ServeOptions const& options) {
  // Until rank processes exist, the front-end holds each rank's scheduler so the admission limits
  // are checked at startup and GetLoads reports their real (idle) state.
  std::vector<scheduler::Scheduler> ranks;
  for (std::uint32_t rank = 0; rank < options.ranks; ++rank) {
    StatusOr<scheduler::Scheduler> made = scheduler::Scheduler::create(options.scheduler);
    if (!made.ok()) {
      return made.status().with_context("scheduler limits");
    }
    ranks.push_back(std::move(made).value());
  }

  // Block the shutdown signals before gRPC starts its threads (they inherit the mask); this
  // thread takes them with sigwait.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  GCMOE_CHECK_INTERNAL(pthread_sigmask(SIG_BLOCK, &signals, nullptr) == 0, "pthread_sigmask");

  frontend::FrontendConfig config;
  config.listen_address = options.listen;
  config.identity = {version_string(), options.ranks, options.backend};
  GCMOE_ASSIGN_OR_RETURN(std::unique_ptr<frontend::FrontendServer> server,
                         frontend::FrontendServer::start(config));
  for (std::uint32_t rank = 0; rank < options.ranks; ++rank) {
    GCMOE_RETURN_IF_ERROR(server->loads().update(rank, ranks[rank].stats()));
  }
  if (!options.port_file.empty()) {
    GCMOE_RETURN_IF_ERROR(write_port_file(options.port_file, server->port()));
  }

  int signal_number = 0;
  GCMOE_CHECK_INTERNAL(sigwait(&signals, &signal_number) == 0, "sigwait");
  spdlog::info("gcmoe serve: signal {} received, draining (timeout {} s)", signal_number,
               options.shutdown_timeout_s);
  server->drain_and_shutdown(
      std::chrono::milliseconds(static_cast<std::int64_t>(options.shutdown_timeout_s * 1000.0)));
  spdlog::info("gcmoe serve: stopped");
  return Status();
}

}  // namespace

CommandRunner add_serve_command(CLI::App& app) {
  auto options = std::make_shared<ServeOptions>();
  CLI::App* sub = app.add_subcommand(
      "serve", "Serve the gcmoe.v1 gRPC API (health, reflection, info, loads; no model yet)");
  sub->add_option("--listen", options->listen, "host:port to listen on (port 0: a free one)")
      ->capture_default_str();
  sub->add_option("--port-file", options->port_file,
                  "Write the bound port to this file once serving (for scripts and tests)");
  sub->add_option("--ranks", options->ranks, "Rank processes (one per GPU)")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  sub->add_option("--backend", options->backend, "Execution backend")
      ->capture_default_str()
      ->check(CLI::IsMember({"cpu", "cuda"}));
  sub->add_option("--shutdown-timeout", options->shutdown_timeout_s,
                  "Seconds in-flight requests get to finish after SIGTERM")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--max-waiting", options->scheduler.max_waiting_requests,
                  "Waiting requests per rank before RESOURCE_EXHAUSTED")
      ->capture_default_str();
  sub->add_option("--max-running", options->scheduler.max_running_requests,
                  "Running requests per rank")
      ->capture_default_str();
  sub->add_option("--max-batch-tokens", options->scheduler.max_batch_tokens,
                  "Tokens per step per rank (decodes + prefill chunks)")
      ->capture_default_str();
  sub->add_option("--kv-blocks", options->scheduler.kv_blocks, "KV-cache blocks per rank")
      ->capture_default_str();
  sub->add_option("--kv-block-size", options->scheduler.kv_block_size,
                  "Token positions per KV block")
      ->capture_default_str();
  return [options] { return run_serve(*options); };
}

}  // namespace gcmoe::cli
