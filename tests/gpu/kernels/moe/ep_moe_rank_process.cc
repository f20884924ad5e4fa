#include "tests/gpu/kernels/moe/ep_moe_rank_process.h"

#include <cuda_runtime.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "engine/backends/cuda/symmetric_memory.h"
#include "engine/runtime/shm_communicator.h"
#include "kernels/moe/ep_moe_rank.h"
#include "tests/gpu/kernels/moe/moe_layer_fixture.h"
#include "tests/support/catch.h"
#include "tests/support/child_process.h"
#include "tests/support/error_norm.h"
#if GCMOE_HAVE_NCCL
#include "engine/backends/cuda/nccl_symmetric_memory.h"
#endif

namespace gcmoe::testing {
namespace {

using cuda::DeviceBuffer;
using kernels::EpMoeRank;

int env_int(char const* name) {
  char const* const v = std::getenv(name);
  REQUIRE(v != nullptr);
  return std::atoi(v);
}

std::string env_string(char const* name) {
  char const* const v = std::getenv(name);
  REQUIRE(v != nullptr);
  return v;
}

// alternate (even steps one stream, odd steps split), one-stream, split or fused (one stream, the
// shared expert in the routed launch).
std::string g_placement = "alternate";

// The layer every test group runs: 16 experts, top-8, up to 12 tokens per rank (GLM-5.2 math).
MoeLayerCase group_case() {
  MoeLayerCase c;
  c.experts = 16;
  c.top_k = 8;
  c.tokens = 12;
  c.seed = 700;
  return c;
}

}  // namespace

int multi_gpu_ranks() {
  int devices = 0;
  REQUIRE(cudaGetDeviceCount(&devices) == cudaSuccess);
  int const ranks = devices >= 4 ? 4 : 2;
  for (int a = 0; a < ranks; ++a) {
    REQUIRE(cudaSetDevice(a) == cudaSuccess);
    for (int b = 0; b < ranks; ++b) {
      if (a == b) {
        continue;
      }
      int can = 0;
      REQUIRE(cudaDeviceCanAccessPeer(&can, a, b) == cudaSuccess);
      REQUIRE(can == 1);
      cudaError_t const e = cudaDeviceEnablePeerAccess(b, 0);
      REQUIRE((e == cudaSuccess || e == cudaErrorPeerAccessAlreadyEnabled));
      cudaGetLastError();
    }
  }
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  return ranks;
}

int ep_tokens_of(int rank, int step, int max_tokens) {
  return (step == 2 && rank == 1) ? 0 : 1 + (rank * 7 + step * 5) % max_tokens;
}

std::vector<float> single_rank_out(kernels::MoeLayerSequential& single, MoeLayerFixture& f,
                                   float const* x, int t) {
  REQUIRE(
      single.run(f.weights(), x, t, f.d_out.data(), nullptr, kernels::SharedExpertLaunch::kSeparate)
          .ok());
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  std::vector<float> out(f.x.size());
  REQUIRE(f.d_out.copy_to_host(out).ok());
  out.resize(static_cast<std::size_t>(t) * f.c.hidden);
  return out;
}

std::vector<int> run_ep_process_group(EpProcessGroup const& g) {
  std::string const shm = "/gcmoe-test-ep-" + std::to_string(getpid());
  std::random_device seed;
  std::string const session = std::to_string((std::uint64_t{seed()} << 32) | seed());
  std::vector<pid_t> pids;
  for (int r = 0; r < g.ranks; ++r) {
    pid_t const pid =
        spawn_self({"[.ep_rank_process]"},
                   {{"GCMOE_EP_MEMORY", g.memory == EpProcessMemory::kCudaIpc ? "ipc" : "nccl"},
                    {"GCMOE_EP_RANK", std::to_string(r)},
                    {"GCMOE_EP_RANKS", std::to_string(g.ranks)},
                    {"GCMOE_EP_GPU_PER_RANK", g.gpu_per_rank ? "1" : "0"},
                    {"GCMOE_EP_STEPS", std::to_string(g.steps)},
                    {"GCMOE_EP_ABSENT", std::to_string(g.absent_rank)},
                    {"GCMOE_EP_TIMEOUT_MS", std::to_string(g.timeout_ms)},
                    {"GCMOE_EP_SHM", shm},
                    {"GCMOE_EP_SESSION", session},
                    {"GCMOE_EP_PLACEMENT", g.placement}});
    REQUIRE(pid > 0);
    pids.push_back(pid);
  }
  // Time-sliced processes on one GPU take ~50 ms per cross-process handshake; allow minutes.
  return wait_all(pids, std::chrono::milliseconds(240000));
}

TEST_CASE("EP rank process (started by the multi-process tests)", "[.ep_rank_process]") {
  int const rank = env_int("GCMOE_EP_RANK");
  int const ranks = env_int("GCMOE_EP_RANKS");
  bool const ipc = env_string("GCMOE_EP_MEMORY") == "ipc";
  bool const gpu_per_rank = env_int("GCMOE_EP_GPU_PER_RANK") != 0;
  int const device = gpu_per_rank ? rank : 0;
  int const steps = env_int("GCMOE_EP_STEPS");
  int const absent = env_int("GCMOE_EP_ABSENT");
  g_placement = env_string("GCMOE_EP_PLACEMENT");
  std::uint64_t const timeout_ns = std::uint64_t{1000000} * env_int("GCMOE_EP_TIMEOUT_MS");
  runtime::ShmCommunicatorOptions options;
  options.name = env_string("GCMOE_EP_SHM");
  options.session = std::stoull(env_string("GCMOE_EP_SESSION"));
  options.rank = rank;
  options.world_size = ranks;
  options.timeout = std::chrono::milliseconds(120000);
  options.join_timeout = std::chrono::milliseconds(60000);
  auto group = runtime::ShmCommunicator::create(options);
  REQUIRE(group.status().to_string() == "OK");
  REQUIRE(cudaSetDevice(device) == cudaSuccess);

  MoeLayerCase const c = group_case();
  MoeLayerFixture f = make_moe_layer_fixture(c);
  RankWeights const share = upload_rank_weights(f, ranks, rank);
  std::size_t const bytes = EpMoeRank::symmetric_bytes(f.config, c.tokens, ranks);
  StatusOr<cuda::SymmetricMemory> memory = Status(StatusCode::kUnimplemented, "built without NCCL");
  if (ipc) {
    memory = cuda::SymmetricMemory::exchange_ipc(bytes, **group);
  } else {
#if GCMOE_HAVE_NCCL
    auto comm = cuda::NcclComm::create(**group);
    REQUIRE(comm.status().to_string() == "OK");
    memory = cuda::register_nccl_window(bytes, *comm, **group);
#endif
  }
  REQUIRE(memory.status().to_string() == "OK");
  CHECK(memory->cross_device() == gpu_per_rank);
  auto ep = EpMoeRank::create(f.config, c.tokens, ranks, rank, std::move(memory).value());
  REQUIRE(ep.status().to_string() == "OK");
  ep->set_timeout_ns(timeout_ns);
  // "fused": the shared expert's rows in the routed launch (one stream, the baseline's placement).
  if (g_placement == "fused") {
    ep->set_shared_expert_launch(kernels::SharedExpertLaunch::kWithRouted);
  }
  // "clean": one stream, one receive buffer set cleaned after each combine, then a barrier (the
  // baseline as the standard pipeline hands off between steps).
  if (g_placement == "clean") {
    ep->set_step_handoff(kernels::EpStepHandoff::kCleanAndBarrier);
  }
  auto single = kernels::MoeLayerSequential::create(f.config, c.tokens);
  REQUIRE(single.ok());

  cudaStream_t streams[3] = {};
  cudaEvent_t events[3] = {};
  for (auto& s : streams) {
    REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  }
  for (auto& e : events) {
    REQUIRE(cudaEventCreateWithFlags(&e, cudaEventDisableTiming) == cudaSuccess);
  }
  auto x = DeviceBuffer<float>::allocate(static_cast<std::size_t>(c.tokens) * c.hidden);
  auto out = DeviceBuffer<float>::allocate(static_cast<std::size_t>(c.tokens) * c.hidden);
  REQUIRE((x.ok() && out.ok()));

  int not_equal = 0;
  double worst_ref = 0.0;
  bool deadline_seen = false;
  std::mt19937_64 rng(c.seed + 1000 * static_cast<std::uint64_t>(rank));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int step = 0; step < (rank == absent ? 0 : steps); ++step) {
    int const t = ep_tokens_of(rank, step, c.tokens);
    std::vector<float> host(static_cast<std::size_t>(c.tokens) * c.hidden);
    for (auto& v : host) {
      v = normal(rng);
    }
    REQUIRE(x->copy_from_host(host).ok());
    // Even steps: the sequential placement (one stream); odd: GC-MoE's (comm and side streams).
    bool const split = g_placement == "split" || (g_placement == "alternate" && step % 2 == 1);
    EpMoeRank::Streams const s{.compute = streams[0],
                               .comm = split ? streams[1] : streams[0],
                               .side = split ? streams[2] : streams[0],
                               .fork = events[0],
                               .comm_done = events[1],
                               .side_done = events[2]};
    REQUIRE(ep->enqueue_step(share.weights, x->data(), t, out->data(), s).ok());
    Status const error = ep->error();
    if (absent >= 0) {
      // A peer never arrives: the step must end with DEADLINE_EXCEEDED, and nothing else is
      // checked (its outputs are not defined).
      deadline_seen = error.code() == StatusCode::kDeadlineExceeded;
      std::printf("ep rank %d of %d: absent rank %d -> %s\n", rank, ranks, absent,
                  error.to_string().c_str());
      // The first wait that passed is the absent rank's counts of the first step (epoch 1).
      std::string const first = "first: counts of rank " + std::to_string(absent) +
                                " at parity 0, waited for epoch 1, the flag held 0";
      CHECK(error.message().find(first) != std::string::npos);
      break;
    }
    REQUIRE(error.to_string() == "OK");
    if (t == 0) {
      continue;
    }
    std::size_t const values = static_cast<std::size_t>(t) * c.hidden;
    std::vector<float> got(values);
    REQUIRE(cudaMemcpy(got.data(), out->data(), values * 4, cudaMemcpyDeviceToHost) == cudaSuccess);
    std::vector<float> const expected = single_rank_out(*single, f, x->data(), t);
    bool const equal = std::memcmp(got.data(), expected.data(), values * 4) == 0;
    not_equal += equal ? 0 : 1;
    host.resize(values);
    auto ref = kernels::moe_layer_ref(f.config, f.ref_weights, host, {});
    REQUIRE(ref.ok());
    double const ref_error = relative_l2_error(got, ref->out);
    worst_ref = std::max(worst_ref, ref_error);
    std::string differing;
    for (int token = 0; token < t; ++token) {
      std::size_t const at = static_cast<std::size_t>(token) * c.hidden;
      if (std::memcmp(got.data() + at, expected.data() + at, c.hidden * 4) != 0) {
        differing += " " + std::to_string(token);
      }
    }
    std::printf(
        "ep rank %d of %d step %d (%s placement): %d tokens, bit-equal %d, rel_l2 %.3e%s%s\n", rank,
        ranks, step,
        split                                              ? "split"
        : g_placement == "fused" || g_placement == "clean" ? g_placement.c_str()
                                                           : "one-stream",
        t, equal ? 1 : 0, ref_error,
        differing.empty() ? "" : ", differing tokens:", differing.c_str());
  }
  // Nobody unmaps or frees a region a peer may still read: every rank gets here first.
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  REQUIRE((*group)->barrier().ok());
  if (absent >= 0) {
    if (rank != absent) {
      CHECK(deadline_seen);
    }
  } else {
    std::printf(
        "ep rank %d of %d (%s, GPU %d): %d steps, not bit-equal to the single-rank layer: %d, "
        "worst rel_l2 vs the CPU reference %.3e\n",
        rank, ranks, ipc ? "CUDA IPC" : "NCCL window", device, steps, not_equal, worst_ref);
    CHECK(not_equal == 0);
    CHECK(worst_ref < 2e-2);  // the bound of the sequential layer test (same kernels)
  }
  for (auto s : streams) {
    CHECK(cudaStreamDestroy(s) == cudaSuccess);
  }
  for (auto e : events) {
    CHECK(cudaEventDestroy(e) == cudaSuccess);
  }
}

}  // namespace gcmoe::testing
