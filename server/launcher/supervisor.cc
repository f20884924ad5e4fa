#include "server/launcher/supervisor.h"

#include <fmt/format.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <random>

#include "engine/common/check.h"
#include "engine/config/parse_model_config.h"

namespace gcmoe::launcher {
namespace {

constexpr std::chrono::milliseconds kStatusRpcTimeout{500};
constexpr std::chrono::milliseconds kMaxBackoff{5000};
constexpr int kStopGraceMs = 3000;

// The communicator segment of one start of the group.
std::string group_shm_name(std::uint64_t generation) {
  return fmt::format("/gcmoe-{}-g{}", ::getpid(), generation);
}

grpc::Status rank_status(internal::v1::RankService::Stub& stub,
                         internal::v1::RankStatusResponse& response) {
  grpc::ClientContext call;
  call.set_deadline(std::chrono::system_clock::now() + kStatusRpcTimeout);
  return stub.GetRankStatus(&call, internal::v1::RankStatusRequest(), &response);
}

}  // namespace

Supervisor::Supervisor(SupervisorConfig config, frontend::FrontendServer& server)
    : config_(std::move(config)), server_(server) {}

Supervisor::~Supervisor() {
  stop();
  if (!run_dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(run_dir_, ignored);
  }
}

Status Supervisor::start() {
  GCMOE_CHECK_ARG(config_.ranks >= 1, "--ranks must be >= 1");
  GCMOE_CHECK_ARG(!config_.attach_dir.empty() || ::access(config_.worker_binary.c_str(), X_OK) == 0,
                  "worker binary {} is not executable", config_.worker_binary);
  // Unix socket paths are limited to 107 bytes: a short directory under /tmp.
  std::string dir_template = "/tmp/gcmoe-XXXXXX";
  if (::mkdtemp(dir_template.data()) == nullptr) {
    return unavailable_error("cannot create the launcher's socket directory under /tmp");
  }
  run_dir_ = dir_template;
  thread_ = std::thread([this] { supervise(); });
  return Status();
}

void Supervisor::stop() {
  {
    std::lock_guard<std::mutex> const lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
  }
}

bool Supervisor::wait_or_stop(std::chrono::milliseconds period) {
  std::unique_lock<std::mutex> lock(mutex_);
  wake_.wait_for(lock, period, [this] { return stopping_; });
  return stopping_;
}

Status Supervisor::start_group(std::uint64_t generation, std::vector<RankProcess>& processes) {
  std::uint64_t const session = std::random_device{}() * 0x100000001ULL ^ generation;
  std::string const shm_name = group_shm_name(generation);
  std::vector<std::string> sockets;
  for (std::uint32_t rank = 0; rank < config_.ranks && !config_.attach_dir.empty(); ++rank) {
    sockets.push_back(
        (std::filesystem::path(config_.attach_dir) / fmt::format("rank-{}.sock", rank)).string());
  }
  for (std::uint32_t rank = 0; rank < config_.ranks && config_.attach_dir.empty(); ++rank) {
    sockets.push_back((run_dir_ / fmt::format("r{}-g{}.sock", rank, generation)).string());
    std::vector<std::string> argv = {config_.worker_binary, "worker"};
    argv.insert(argv.end(), config_.worker_args.begin(), config_.worker_args.end());
    std::vector<std::string> const group_args = {"--rank",       std::to_string(rank),
                                                 "--world-size", std::to_string(config_.ranks),
                                                 "--shm-name",   shm_name,
                                                 "--session",    std::to_string(session),
                                                 "--socket",     sockets.back()};
    argv.insert(argv.end(), group_args.begin(), group_args.end());
    GCMOE_ASSIGN_OR_RETURN(RankProcess process, RankProcess::spawn(argv));
    processes.push_back(std::move(process));
  }
  if (config_.attach_dir.empty()) {
    spdlog::info("supervisor: group {} started ({} ranks, shm {})", generation, config_.ranks,
                 shm_name);
  } else {
    spdlog::info("supervisor: attaching to {} ranks in {}", config_.ranks, config_.attach_dir);
  }

  auto group = std::make_shared<frontend::RankGroup>();
  group->generation = generation;
  for (std::string const& socket : sockets) {
    group->ranks.push_back(internal::v1::RankService::NewStub(
        grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials())));
  }
  auto const deadline = std::chrono::steady_clock::now() + config_.load_timeout;
  std::vector<bool> ready(config_.ranks, false);
  internal::v1::RankStatusResponse first;
  while (std::find(ready.begin(), ready.end(), false) != ready.end()) {
    for (std::uint32_t rank = 0; rank < config_.ranks; ++rank) {
      if (std::optional<std::string> const exit =
              processes.empty() ? std::nullopt : processes[rank].poll_exit()) {
        return unavailable_error(
            fmt::format("rank {} exited while loading ({}); see its log above", rank, *exit));
      }
      internal::v1::RankStatusResponse response;
      if (!ready[rank] && std::filesystem::exists(sockets[rank]) &&
          rank_status(*group->ranks[rank], response).ok()) {
        ready[rank] = true;
        if (rank == 0) {
          first = response;
        }
      }
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return deadline_exceeded_error(
          fmt::format("the ranks did not load within {} s", config_.load_timeout.count() / 1000));
    }
    if (wait_or_stop(std::chrono::milliseconds(50))) {
      return cancelled_error("stopping");
    }
  }
  group->model.family = first.model_family();
  group->model.model_path = config_.model_path;
  group->model.vocab_size = first.vocab_size();
  group->model.max_context_tokens = first.max_context_tokens();
  group->model.eos_token_ids.assign(first.eos_token_ids().begin(), first.eos_token_ids().end());
  // The shape the client may want to see; a directory without a readable config.json (a test
  // double) leaves it 0.
  if (StatusOr<config::ModelConfig> const parsed =
          config::load_model_config(std::filesystem::path(config_.model_path) / "config.json");
      parsed.ok()) {
    group->model.num_layers = static_cast<std::uint32_t>(parsed->num_hidden_layers);
    group->model.num_routed_experts = static_cast<std::uint32_t>(parsed->moe.n_routed_experts);
    group->model.experts_per_token = static_cast<std::uint32_t>(parsed->moe.num_experts_per_tok);
  }
  last_answer_.assign(config_.ranks, std::chrono::steady_clock::now());
  server_.group().set(group);
  GCMOE_RETURN_IF_ERROR(
      server_.state().mark_ready({group->model.vocab_size, group->model.max_context_tokens}));
  spdlog::info("supervisor: group {} ready ({} ranks, {}, vocab {}, context {})", generation,
               config_.ranks, group->model.family, group->model.vocab_size,
               group->model.max_context_tokens);
  return Status();
}

std::optional<std::size_t> Supervisor::poll_loads(frontend::RankGroup const& group) {
  std::vector<frontend::RankGauges> gauges(group.ranks.size());
  std::optional<std::size_t> unresponsive;
  for (std::size_t rank = 0; rank < group.ranks.size(); ++rank) {
    internal::v1::RankStatusResponse response;
    auto const now = std::chrono::steady_clock::now();
    if (!rank_status(*group.ranks[rank], response).ok()) {
      if (now - last_answer_[rank] > config_.unresponsive_timeout && !unresponsive.has_value()) {
        unresponsive = rank;
      }
      continue;
    }
    last_answer_[rank] = now;
    v1::RankLoad const& load = response.load();
    scheduler::SchedulerStats stats;
    stats.waiting = static_cast<std::int32_t>(load.waiting_requests());
    stats.running = static_cast<std::int32_t>(load.running_requests());
    stats.kv_blocks_total = static_cast<std::int32_t>(load.kv_blocks_total());
    stats.kv_blocks_reserved = static_cast<std::int32_t>(load.kv_blocks_reserved());
    stats.kv_blocks_allocated = static_cast<std::int32_t>(load.kv_blocks_used());
    stats.steps = response.model_steps();
    (void)server_.loads().update(static_cast<std::uint32_t>(rank), stats);
    gauges[rank] = {load.waiting_requests(),     load.running_requests(),
                    load.kv_blocks_used(),       load.kv_blocks_total(),
                    response.model_steps(),      response.step_seconds_sum(),
                    response.last_step_seconds()};
  }
  server_.metrics().set_ranks(std::move(gauges));
  return unresponsive;
}

void Supervisor::watch_group(std::vector<RankProcess>& processes) {
  while (!wait_or_stop(config_.poll_period)) {
    for (std::size_t rank = 0; rank < processes.size(); ++rank) {
      if (std::optional<std::string> const exit = processes[rank].poll_exit()) {
        std::string const reason = fmt::format("rank {} (pid {}) failed: {}; restarting the group",
                                               rank, processes[rank].pid(), *exit);
        spdlog::error("supervisor: {}", reason);
        server_.state().mark_not_ready(reason);
        return;
      }
    }
    if (std::shared_ptr<frontend::RankGroup const> const group = server_.group().get()) {
      if (std::optional<std::size_t> const hung = poll_loads(*group)) {
        std::string const reason =
            fmt::format("rank {} has not answered for {} ms; restarting the group", *hung,
                        config_.unresponsive_timeout.count());
        spdlog::error("supervisor: {}", reason);
        server_.state().mark_not_ready(reason);
        return;
      }
    }
  }
}

void Supervisor::supervise() {
  std::chrono::milliseconds backoff = config_.restart_backoff;
  for (std::uint64_t generation = 1;; ++generation) {
    std::vector<RankProcess> processes;
    Status const started = start_group(generation, processes);
    if (started.ok()) {
      backoff = config_.restart_backoff;
      watch_group(processes);
    } else if (started.code() != StatusCode::kCancelled) {
      spdlog::error("supervisor: group {} failed to start: {}", generation, started.to_string());
      server_.state().mark_not_ready(
          fmt::format("the rank group failed to start: {}", started.message()));
    }
    // Fault or stop: nobody may route to this group again; its streams end as it dies.
    server_.group().set(nullptr);
    bool stopping = false;
    {
      std::lock_guard<std::mutex> const lock(mutex_);
      stopping = stopping_;
    }
    if (!stopping) {
      // Streams on a frozen or attached rank would not end by themselves.
      std::size_t const cancelled = server_.in_flight().cancel_all();
      spdlog::info("supervisor: {} requests in flight ended", cancelled);
    }
    for (RankProcess& process : processes) {
      process.signal(stopping ? SIGTERM : SIGKILL);
    }
    for (RankProcess& process : processes) {
      process.terminate(stopping ? kStopGraceMs : 0);
    }
    // Rank 0 unlinks it once the group joined; a group that died before leaves it to us.
    ::shm_unlink(group_shm_name(generation).c_str());
    if (stopping || wait_or_stop(backoff)) {
      return;
    }
    backoff = std::min(backoff * 2, kMaxBackoff);
  }
}

}  // namespace gcmoe::launcher
