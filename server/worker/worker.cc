#include "server/worker/worker.h"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <optional>
#include <thread>

#include "engine/common/check.h"
#include "engine/runtime/rank_engine.h"
#include "engine/runtime/shm_communicator.h"
#include "engine/runtime/single_rank_communicator.h"
#include "server/worker/rank_service.h"

namespace gcmoe::worker {
namespace {

std::optional<std::int32_t> env_int(char const* name) {
  char const* value = std::getenv(name);
  if (value == nullptr || *value == '\0') {
    return std::nullopt;
  }
  char* end = nullptr;
  long const parsed = std::strtol(value, &end, 10);
  if (end == nullptr || *end != '\0' || parsed < 0) {
    return std::nullopt;
  }
  return static_cast<std::int32_t>(parsed);
}

std::string env_string(char const* name, std::string fallback) {
  char const* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::string(value) : fallback;
}

}  // namespace

Status resolve_from_environment(WorkerOptions& options) {
  if (options.rank < 0) {
    options.rank = env_int("OMPI_COMM_WORLD_RANK").value_or(env_int("SLURM_PROCID").value_or(-1));
  }
  if (options.world_size < 0) {
    options.world_size =
        env_int("OMPI_COMM_WORLD_SIZE").value_or(env_int("SLURM_NTASKS").value_or(-1));
  }
  GCMOE_CHECK_ARG(options.rank >= 0 && options.world_size >= 1 && options.rank < options.world_size,
                  "rank {} of {}: give --rank and --world-size, or start under mpirun "
                  "(OMPI_COMM_WORLD_RANK/SIZE) or srun (SLURM_PROCID/NTASKS)",
                  options.rank, options.world_size);
  std::string const job =
      env_string("SLURM_JOB_ID", env_string("OMPI_MCA_ess_base_jobid", "local"));
  if (options.shm_name.empty()) {
    options.shm_name = env_string("GCMOE_SHM_NAME", "/gcmoe-job-" + job);
  }
  if (options.socket_path.empty()) {
    options.socket_path = env_string("GCMOE_SOCKET_DIR", "/tmp/gcmoe-job-" + job) + "/rank-" +
                          std::to_string(options.rank) + ".sock";
  }
  return Status();
}

Status run_worker(WorkerOptions options, ModelLoader const& loader) {
  // A rank never outlives the front-end that launched it.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  GCMOE_RETURN_IF_ERROR(resolve_from_environment(options));
  std::string const who = fmt::format("rank {}/{}", options.rank, options.world_size);

  // Signals are taken by one thread; gRPC's threads inherit the blocked mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  GCMOE_CHECK_INTERNAL(pthread_sigmask(SIG_BLOCK, &signals, nullptr) == 0, "pthread_sigmask");
  static std::atomic<runtime::RankEngine*> running_engine{nullptr};
  std::thread([signals] {
    int signal_number = 0;
    sigwait(&signals, &signal_number);
    runtime::RankEngine* engine = running_engine.load();
    if (engine == nullptr) {
      std::_Exit(0);  // still loading: nothing in flight
    }
    spdlog::info("worker: signal {}, stopping the group", signal_number);
    engine->request_stop();
  }).detach();

  std::unique_ptr<runtime::Communicator> comm;
  if (options.world_size == 1) {
    comm = std::make_unique<runtime::SingleRankCommunicator>();
  } else {
    runtime::ShmCommunicatorOptions shm;
    shm.name = options.shm_name;
    shm.session = options.session;
    shm.rank = options.rank;
    shm.world_size = options.world_size;
    shm.timeout = options.collective_timeout;
    shm.join_timeout = options.join_timeout;
    GCMOE_ASSIGN_OR_RETURN(comm, runtime::ShmCommunicator::create(shm));
  }
  spdlog::info("worker {}: joined (shm {}), loading {}", who, options.shm_name,
               options.model_dir.string());
  StatusOr<std::unique_ptr<runtime::StepModel>> model = loader(options, *comm);
  if (!model.ok()) {
    return model.status().with_context(who + " loading the model");
  }
  runtime::RankEngineConfig config;
  config.scheduler = options.scheduler;
  GCMOE_ASSIGN_OR_RETURN(std::unique_ptr<runtime::RankEngine> engine,
                         runtime::RankEngine::create(config, **model, *comm));

  RankServiceImpl service(*engine, options.rank, options.world_size);
  std::error_code dir_error;
  std::filesystem::create_directories(std::filesystem::path(options.socket_path).parent_path(),
                                      dir_error);
  std::filesystem::remove(options.socket_path);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + options.socket_path, grpc::InsecureServerCredentials());
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr) {
    return unavailable_error(fmt::format("{}: cannot listen on unix:{}", who, options.socket_path));
  }
  running_engine.store(engine.get());
  spdlog::info("worker {}: ready on unix:{} ({}, vocab {})", who, options.socket_path,
               (*model)->info().family, (*model)->info().vocab_size);
  Status const ran = engine->run();
  running_engine.store(nullptr);
  // Streams of requests the loop ended are answered; give them a moment, then close.
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  server->Wait();
  std::filesystem::remove(options.socket_path);
  if (!ran.ok()) {
    return ran.with_context(who);
  }
  spdlog::info("worker {}: stopped", who);
  return Status();
}

}  // namespace gcmoe::worker
