#include "server/worker/worker_cli.h"

#include <memory>

namespace gcmoe::worker {

std::function<Status()> add_worker_subcommand(CLI::App& app, ModelLoader loader) {
  auto options = std::make_shared<WorkerOptions>();
  auto collective_ms = std::make_shared<std::int64_t>(options->collective_timeout.count());
  CLI::App* sub =
      app.add_subcommand("worker", "One rank process (started by `gcmoe serve`, mpirun or srun)");
  sub->add_option("--model", options->model_dir, "Checkpoint directory")->required();
  sub->add_option("--backend", options->backend, "Execution backend")
      ->capture_default_str()
      ->check(CLI::IsMember({"cpu", "cuda"}));
  sub->add_option("--rank", options->rank,
                  "This rank (default: OMPI_COMM_WORLD_RANK or SLURM_PROCID)");
  sub->add_option("--world-size", options->world_size,
                  "Ranks in the group (default: OMPI_COMM_WORLD_SIZE or SLURM_NTASKS)");
  sub->add_option("--shm-name", options->shm_name,
                  "Shared-memory segment of the group (default: $GCMOE_SHM_NAME or per job)");
  sub->add_option("--session", options->session, "Group nonce given by the launcher");
  sub->add_option("--socket", options->socket_path,
                  "Unix socket of this rank's RankService (default: per job under /tmp)");
  sub->add_option("--collective-timeout-ms", *collective_ms,
                  "How long a collective waits for the slowest rank")
      ->capture_default_str();
  sub->add_option("--max-waiting", options->scheduler.max_waiting_requests)->capture_default_str();
  sub->add_option("--max-running", options->scheduler.max_running_requests)->capture_default_str();
  sub->add_option("--max-batch-tokens", options->scheduler.max_batch_tokens)->capture_default_str();
  sub->add_option("--kv-blocks", options->scheduler.kv_blocks)->capture_default_str();
  sub->add_option("--kv-block-size", options->scheduler.kv_block_size)->capture_default_str();
  return [options, collective_ms, loader = std::move(loader)] {
    WorkerOptions resolved = *options;
    resolved.collective_timeout = std::chrono::milliseconds(*collective_ms);
    return run_worker(resolved, loader);
  };
}

}  // namespace gcmoe::worker
