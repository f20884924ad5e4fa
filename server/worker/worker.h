#pragma once
// One rank process (`gcmoe worker`): joins its group's communicator, loads its StepModel, serves
// gcmoe.internal.v1.RankService on a unix socket and runs the RankEngine's lockstep loop until
// SIGTERM/SIGINT (the group stops together) or a fault (a nonzero exit: the supervisor restarts
// the whole group).
//
// Started by the front-end's supervisor (flags), or by mpirun / srun: --rank and --world-size
// then default to OMPI_COMM_WORLD_RANK/SIZE or SLURM_PROCID/NTASKS.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "engine/common/status.h"
#include "engine/runtime/communicator.h"
#include "engine/runtime/step_model.h"
#include "engine/scheduler/scheduler_types.h"

namespace gcmoe::worker {

struct WorkerOptions {
  std::filesystem::path model_dir;
  std::string backend = "cpu";   // cpu | cuda
  std::int32_t rank = -1;        // -1: from the launcher's environment
  std::int32_t world_size = -1;  // -1: from the launcher's environment
  std::string shm_name;          // the group's communicator segment (world_size > 1)
  std::uint64_t session = 0;     // the group's nonce (stale segments never match)
  std::string socket_path;       // unix socket of this rank's RankService
  scheduler::SchedulerConfig scheduler;
  std::chrono::milliseconds collective_timeout{30000};
  std::chrono::milliseconds join_timeout{60000};
};

// The model of a rank, given its options and its group's communicator.
using ModelLoader = std::function<StatusOr<std::unique_ptr<runtime::StepModel>>(
    WorkerOptions const& options, runtime::Communicator& comm)>;

// Fills rank / world_size left at -1 from OMPI_COMM_WORLD_RANK/SIZE or SLURM_PROCID/NTASKS, and
// shm_name / socket_path left empty from GCMOE_SHM_NAME / GCMOE_SOCKET_DIR (defaults under /tmp
// named by SLURM_JOB_ID or the OMPI job). INVALID_ARGUMENT when the rank is still unknown.
Status resolve_from_environment(WorkerOptions& options);

// Runs the rank until stopped (OK) or failed.
Status run_worker(WorkerOptions options, ModelLoader const& loader);

}  // namespace gcmoe::worker
