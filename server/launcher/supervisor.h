#pragma once
// The launcher/supervisor of `gcmoe serve`: starts N `worker` processes as one group (a fresh
// shared-memory segment name and session nonce per start — the rendezvous; the CUDA backend's
// NCCL unique id needs no launcher slot: rank 0 makes it and all_gathers its 128 bytes over the
// group's ShmCommunicator), turns the front-end ready once every rank answers GetRankStatus,
// polls the ranks' loads for GetLoads and /metrics, and on a rank fault turns the front-end not
// ready, kills the group (every in-flight stream then ends with UNAVAILABLE at once) and starts
// it again after a back-off.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "server/frontend/frontend_server.h"
#include "server/launcher/rank_process.h"

namespace gcmoe::launcher {

struct SupervisorConfig {
  std::string worker_binary;             // the `gcmoe` binary (or a test worker)
  std::vector<std::string> worker_args;  // after `worker`: --model, --backend, limits ...
  std::uint32_t ranks = 1;
  std::string model_path;  // reported by GetModelInfo
  std::chrono::milliseconds load_timeout{300000};
  std::chrono::milliseconds restart_backoff{500};
  std::chrono::milliseconds poll_period{100};
  // A rank process that is alive but answers no GetRankStatus for this long (frozen, stopped,
  // swapping) is a fault like an exit: the group restarts.
  std::chrono::milliseconds unresponsive_timeout{2000};
  // Attach to ranks started elsewhere (mpirun / srun: `gcmoe worker` with GCMOE_SOCKET_DIR set to
  // this directory) instead of spawning them: their sockets are DIR/rank-<r>.sock. A fault then
  // turns the front-end not ready until the ranks answer again (their launcher restarts them).
  std::string attach_dir;
};

class Supervisor {
 public:
  Supervisor(SupervisorConfig config, frontend::FrontendServer& server);
  ~Supervisor();
  Supervisor(Supervisor const&) = delete;
  Supervisor& operator=(Supervisor const&) = delete;

  // Starts the group in the background (the front-end stays not ready until it is up).
  Status start();
  // Stops the workers (SIGTERM, then SIGKILL after a grace) and the background thread.
  void stop();

 private:
  void supervise();
  Status start_group(std::uint64_t generation, std::vector<RankProcess>& processes);
  void watch_group(std::vector<RankProcess>& processes);
  // Refreshes loads and metrics; returns the rank that has not answered for
  // unresponsive_timeout, if any.
  std::optional<std::size_t> poll_loads(frontend::RankGroup const& group);
  bool wait_or_stop(std::chrono::milliseconds period);

  SupervisorConfig config_;
  frontend::FrontendServer& server_;
  std::filesystem::path run_dir_;
  std::vector<std::chrono::steady_clock::time_point> last_answer_;  // per rank
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
};

}  // namespace gcmoe::launcher
