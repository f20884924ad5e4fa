// `gcmoe worker`: one rank process hosting the checkpoint's model family (load_step_model). The
// supervisor of `gcmoe serve` starts N of them; mpirun / srun can too (worker.h).
#include "engine/model/step_model_factory.h"
#include "server/cli/command.h"
#include "server/worker/worker_cli.h"

namespace gcmoe::cli {

CommandRunner add_worker_command(CLI::App& app) {
  return worker::add_worker_subcommand(
      app, [](worker::WorkerOptions const& options, runtime::Communicator& comm) {
        model::StepModelOptions model;
        model.model_dir = options.model_dir;
        model.backend =
            options.backend == "cuda" ? model::StepBackend::kCuda : model::StepBackend::kCpu;
        model.kv_blocks = options.scheduler.kv_blocks;
        model.kv_block_size = options.scheduler.kv_block_size;
        model.max_batch_tokens = options.scheduler.max_batch_tokens;
        return model::load_step_model(model, comm);
      });
}

}  // namespace gcmoe::cli
