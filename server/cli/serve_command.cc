// `gcmoe serve`: the front-end process. It launches --ranks `gcmoe worker` processes (the
// supervisor: server/launcher), turns ready once they have all loaded the model (the embedded
// default when --model is not given), serves gcmoe.v1 (Generate streams, Abort, info, loads),
// health, reflection and /metrics. SIGTERM or SIGINT drains: not ready at once, new requests
// refused, in-flight ones given --shutdown-timeout to end, the rest aborted, the workers stopped.
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
#include "engine/tiny/ensure_tiny_model.h"
#include "server/cli/command.h"
#include "server/frontend/frontend_server.h"
#include "server/frontend/metrics_http.h"
#include "server/launcher/supervisor.h"

namespace gcmoe::cli {
namespace {

struct ServeOptions {
  std::string listen = "0.0.0.0:50051";
  std::string port_file;
  std::uint32_t ranks = 1;
  std::string backend = "cpu";
  double shutdown_timeout_s = 30.0;
  scheduler::SchedulerConfig scheduler;
  std::string model_dir;  // empty: the embedded default
  std::filesystem::path embedded_config = "configs/models/tiny-glm-5.2/config.json";
  std::filesystem::path cache_dir = ".cache/gcmoe/tiny-glm-5.2";
  std::string worker_binary;  // empty: this binary
  std::string metrics_listen = "0.0.0.0:9400";
  std::string metrics_port_file;
  double load_timeout_s = 300.0;
  std::int64_t collective_timeout_ms = 30000;
  std::string attach_dir;  // ranks started by mpirun / srun
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

StatusOr<std::string> resolve_model_dir(ServeOptions const& options) {
  if (!options.model_dir.empty()) {
    return options.model_dir;
  }
  GCMOE_ASSIGN_OR_RETURN(std::filesystem::path const dir,
                         tiny::ensure_tiny_model(options.embedded_config, options.cache_dir,
                                                 tiny::kEmbeddedDefaultSeed));
  spdlog::info("gcmoe serve: the embedded default model at {}", dir.string());
  return std::filesystem::absolute(dir).string();
}

std::vector<std::string> worker_args(ServeOptions const& options, std::string const& model_dir) {
  scheduler::SchedulerConfig const& s = options.scheduler;
  return {"--model", model_dir, "--backend", options.backend,
          // The rank's scheduler counts every request not yet admitted to KV as waiting, so it
          // holds the front-end's whole per-rank share (running + waiting): a request the
          // front-end admitted is never refused by its rank.
          "--max-waiting", std::to_string(s.max_waiting_requests + s.max_running_requests),
          "--max-running", std::to_string(s.max_running_requests), "--max-batch-tokens",
          std::to_string(s.max_batch_tokens), "--kv-blocks", std::to_string(s.kv_blocks),
          "--kv-block-size", std::to_string(s.kv_block_size), "--collective-timeout-ms",
          std::to_string(options.collective_timeout_ms)};
}

Status run_serve(ServeOptions const& options) {
  // The limits are checked here, before any process starts; until the ranks report, GetLoads
  // shows each rank's idle scheduler.
  StatusOr<scheduler::Scheduler> const idle = scheduler::Scheduler::create(options.scheduler);
  if (!idle.ok()) {
    return idle.status().with_context("scheduler limits");
  }
  GCMOE_ASSIGN_OR_RETURN(std::string const model_dir, resolve_model_dir(options));
  std::string worker_binary = options.worker_binary;
  if (worker_binary.empty()) {
    std::error_code error;
    worker_binary = std::filesystem::read_symlink("/proc/self/exe", error).string();
    GCMOE_CHECK_INTERNAL(!error, "cannot resolve /proc/self/exe: {}", error.message());
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
  config.not_ready_reason = fmt::format("loading {} on {} ranks", model_dir, options.ranks);
  config.per_rank_capacity =
      options.scheduler.max_running_requests + options.scheduler.max_waiting_requests;
  GCMOE_ASSIGN_OR_RETURN(std::unique_ptr<frontend::FrontendServer> server,
                         frontend::FrontendServer::start(config));
  for (std::uint32_t rank = 0; rank < options.ranks; ++rank) {
    GCMOE_RETURN_IF_ERROR(server->loads().update(rank, idle->stats()));
  }
  std::unique_ptr<frontend::MetricsHttpServer> metrics;
  if (!options.metrics_listen.empty()) {
    GCMOE_ASSIGN_OR_RETURN(
        metrics, frontend::MetricsHttpServer::start(options.metrics_listen, server->metrics()));
    if (!options.metrics_port_file.empty()) {
      GCMOE_RETURN_IF_ERROR(write_port_file(options.metrics_port_file, metrics->port()));
    }
  }

  launcher::SupervisorConfig supervisor_config;
  supervisor_config.worker_binary = worker_binary;
  supervisor_config.worker_args = worker_args(options, model_dir);
  supervisor_config.ranks = options.ranks;
  supervisor_config.attach_dir = options.attach_dir;
  supervisor_config.model_path = model_dir;
  supervisor_config.load_timeout =
      std::chrono::milliseconds(static_cast<std::int64_t>(options.load_timeout_s * 1000.0));
  launcher::Supervisor supervisor(supervisor_config, *server);
  GCMOE_RETURN_IF_ERROR(supervisor.start());
  if (!options.port_file.empty()) {
    GCMOE_RETURN_IF_ERROR(write_port_file(options.port_file, server->port()));
  }

  int signal_number = 0;
  GCMOE_CHECK_INTERNAL(sigwait(&signals, &signal_number) == 0, "sigwait");
  spdlog::info("gcmoe serve: signal {} received, draining (timeout {} s)", signal_number,
               options.shutdown_timeout_s);
  server->drain_and_shutdown(
      std::chrono::milliseconds(static_cast<std::int64_t>(options.shutdown_timeout_s * 1000.0)));
  supervisor.stop();
  spdlog::info("gcmoe serve: stopped");
  return Status();
}

}  // namespace

CommandRunner add_serve_command(CLI::App& app) {
  auto options = std::make_shared<ServeOptions>();
  CLI::App* sub =
      app.add_subcommand("serve", "Serve the gcmoe.v1 gRPC API with --ranks worker processes");
  if (char const* cache = std::getenv("GCMOE_CACHE_DIR"); cache != nullptr) {
    options->cache_dir = std::filesystem::path(cache) / "tiny-glm-5.2";
  }
  sub->add_option("--model", options->model_dir,
                  "Checkpoint directory (default: the embedded tiny GLM-5.2, made on first use)");
  sub->add_option("--embedded-config", options->embedded_config,
                  "config.json of the embedded default model")
      ->capture_default_str();
  sub->add_option("--cache-dir", options->cache_dir,
                  "Where the embedded default's weights are written once and reused "
                  "(default .cache/gcmoe/tiny-glm-5.2, or $GCMOE_CACHE_DIR/tiny-glm-5.2)");
  sub->add_option("--worker-binary", options->worker_binary,
                  "Binary started as `BINARY worker ...` per rank (default: this gcmoe)");
  sub->add_option("--metrics-listen", options->metrics_listen,
                  "host:port of the Prometheus /metrics endpoint (empty: off; port 0: a free one)")
      ->capture_default_str();
  sub->add_option("--metrics-port-file", options->metrics_port_file,
                  "Write the /metrics port to this file once listening");
  sub->add_option("--load-timeout", options->load_timeout_s,
                  "Seconds the ranks get to load the model")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_option("--attach", options->attach_dir,
                  "Serve --ranks ranks started by mpirun / srun (`gcmoe worker` with "
                  "GCMOE_SOCKET_DIR=DIR) instead of spawning them");
  sub->add_option("--collective-timeout-ms", options->collective_timeout_ms,
                  "How long a rank waits for the slowest rank in a collective")
      ->capture_default_str();
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
