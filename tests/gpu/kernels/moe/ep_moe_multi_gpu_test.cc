// Expert parallelism across GPUs (kernels/moe/ep_moe_rank.h): one rank per GPU, each enqueuing its
// own step (EpMoeRank::enqueue_step, sequential and GC-MoE placements alternating) as a process
// per GPU would; peers' buffers are peer-mapped device
// pointers and every flag is published and acquired at system scope. Every rank's output must
// equal the single-rank layer (all experts, one GPU) on the same tokens, over several steps with
// uneven token counts and a rank with none. Needs 2 GPUs (the runner skips with fewer).
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "kernels/moe/ep_moe_rank.h"
#include "tests/gpu/kernels/moe/ep_moe_rank_process.h"
#include "tests/gpu/kernels/moe/moe_layer_fixture.h"
#include "tests/support/catch.h"
#include "tests/support/error_norm.h"

namespace gcmoe::kernels {
namespace {

using cuda::DeviceBuffer;

struct GpuRank {
  int device = 0;
  DeviceBuffer<float> x, out;
  testing::RankWeights share;
  cudaStream_t compute = nullptr;
  cudaStream_t comm = nullptr;
  cudaStream_t side = nullptr;
  cudaEvent_t events[3] = {};
};

TEST_CASE("EP across GPUs: one rank per GPU equals the single-rank layer") {
  int const ranks = testing::multi_gpu_ranks();
  testing::MoeLayerCase c;
  c.experts = 16;
  c.top_k = 8;
  c.tokens = 12;
  c.seed = 700;
  testing::MoeLayerFixture f = testing::make_moe_layer_fixture(c);
  auto single = MoeLayerSequential::create(f.config, c.tokens);
  REQUIRE(single.ok());

  std::vector<GpuRank> gpus(static_cast<std::size_t>(ranks));
  std::vector<EpMoeRank> eps;
  std::vector<int> rank_devices;
  for (int r = 0; r < ranks; ++r) {
    rank_devices.push_back(r);
  }
  auto memories = cuda::SymmetricMemory::allocate_local_group(
      EpMoeRank::symmetric_bytes(f.config, c.tokens, ranks), rank_devices);
  REQUIRE(memories.ok());
  for (int r = 0; r < ranks; ++r) {
    CHECK((*memories)[static_cast<std::size_t>(r)].cross_device());
    GpuRank& g = gpus[static_cast<std::size_t>(r)];
    g.device = r;
    REQUIRE(cudaSetDevice(r) == cudaSuccess);
    g.share = testing::upload_rank_weights(f, ranks, r);
    auto x = DeviceBuffer<float>::allocate(static_cast<std::size_t>(c.tokens) * c.hidden);
    auto out = DeviceBuffer<float>::allocate(static_cast<std::size_t>(c.tokens) * c.hidden);
    REQUIRE((x.ok() && out.ok()));
    g.x = std::move(x).value();
    g.out = std::move(out).value();
    REQUIRE(cudaStreamCreateWithFlags(&g.compute, cudaStreamNonBlocking) == cudaSuccess);
    REQUIRE(cudaStreamCreateWithFlags(&g.comm, cudaStreamNonBlocking) == cudaSuccess);
    REQUIRE(cudaStreamCreateWithFlags(&g.side, cudaStreamNonBlocking) == cudaSuccess);
    for (auto& event : g.events) {
      REQUIRE(cudaEventCreateWithFlags(&event, cudaEventDisableTiming) == cudaSuccess);
    }
    auto rank = EpMoeRank::create(f.config, c.tokens, ranks, r,
                                  std::move((*memories)[static_cast<std::size_t>(r)]));
    REQUIRE(rank.status().to_string() == "OK");
    eps.push_back(std::move(rank).value());
  }

  std::mt19937_64 rng(c.seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  int not_equal = 0;
  double worst = 0.0;
  for (int step = 0; step < 4; ++step) {
    std::vector<int> tokens(static_cast<std::size_t>(ranks));
    std::vector<std::vector<float>> xs(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r) {
      int const t = testing::ep_tokens_of(r, step, c.tokens);
      tokens[static_cast<std::size_t>(r)] = t;
      auto& x = xs[static_cast<std::size_t>(r)];
      x.resize(static_cast<std::size_t>(c.tokens) * c.hidden);
      for (auto& v : x) {
        v = normal(rng);
      }
      REQUIRE(cudaSetDevice(r) == cudaSuccess);
      REQUIRE(gpus[static_cast<std::size_t>(r)].x.copy_from_host(x).ok());
    }
    // Each rank enqueues its whole step on its own GPU before the next rank starts.
    for (int r = 0; r < ranks; ++r) {
      GpuRank& g = gpus[static_cast<std::size_t>(r)];
      EpMoeRank& ep = eps[static_cast<std::size_t>(r)];
      int const t = tokens[static_cast<std::size_t>(r)];
      REQUIRE(cudaSetDevice(r) == cudaSuccess);
      // Even steps: the sequential placement (one stream); odd: GC-MoE's (comm and side streams).
      bool const split = step % 2 == 1;
      EpMoeRank::Streams const streams{.compute = g.compute,
                                       .comm = split ? g.comm : g.compute,
                                       .side = split ? g.side : g.compute,
                                       .fork = g.events[0],
                                       .comm_done = g.events[1],
                                       .side_done = g.events[2]};
      REQUIRE(ep.enqueue_step(g.share.weights, g.x.data(), t, g.out.data(), streams).ok());
    }
    for (int r = 0; r < ranks; ++r) {
      REQUIRE(cudaSetDevice(r) == cudaSuccess);
      REQUIRE(eps[static_cast<std::size_t>(r)].error().to_string() == "OK");
    }
    for (int r = 0; r < ranks; ++r) {
      int const t = tokens[static_cast<std::size_t>(r)];
      if (t == 0) {
        continue;
      }
      std::size_t const values = static_cast<std::size_t>(t) * c.hidden;
      std::vector<float> got(values);
      REQUIRE(cudaSetDevice(r) == cudaSuccess);
      REQUIRE(cudaMemcpy(got.data(), gpus[static_cast<std::size_t>(r)].out.data(), values * 4,
                         cudaMemcpyDefault) == cudaSuccess);
      REQUIRE(cudaSetDevice(0) == cudaSuccess);
      REQUIRE(f.d_x.copy_from_host(xs[static_cast<std::size_t>(r)]).ok());
      std::vector<float> const expected = testing::single_rank_out(*single, f, f.d_x.data(), t);
      not_equal += std::memcmp(got.data(), expected.data(), values * 4) != 0;
      worst = std::max(worst, gcmoe::testing::relative_l2_error(got, expected));
    }
  }
  std::printf(
      "ep across %d GPUs (E=%d, k=%d): 4 steps, rank-steps not bit-equal to the "
      "single-rank layer: %d, worst rel_l2 %.3e\n",
      ranks, c.experts, c.top_k, not_equal, worst);
  CHECK(not_equal == 0);
  for (auto& g : gpus) {
    REQUIRE(cudaSetDevice(g.device) == cudaSuccess);
    REQUIRE(cudaStreamDestroy(g.compute) == cudaSuccess);
    REQUIRE(cudaStreamDestroy(g.comm) == cudaSuccess);
    REQUIRE(cudaStreamDestroy(g.side) == cudaSuccess);
    for (auto event : g.events) {
      REQUIRE(cudaEventDestroy(event) == cudaSuccess);
    }
  }
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
}

// The same protocol with one process per GPU, as the launcher runs it: regions shared through
// NCCL symmetric windows (LSA pointers) and through CUDA IPC.
TEST_CASE("EP across GPUs: one process per GPU, NCCL windows and CUDA IPC") {
  int devices = 0;
  REQUIRE(cudaGetDeviceCount(&devices) == cudaSuccess);
  std::vector<std::pair<testing::EpProcessMemory, char const*>> kinds = {
      {testing::EpProcessMemory::kCudaIpc, "CUDA IPC"}};
#if GCMOE_HAVE_NCCL
  kinds.insert(kinds.begin(), {testing::EpProcessMemory::kNcclWindow, "NCCL windows"});
#endif
  for (auto const& [memory, name] : kinds) {
    // The protocol both ways: parity double buffering with the placements alternating, and the
    // baseline's clean pass and barrier between steps.
    for (char const* const placement : {"alternate", "clean"}) {
      testing::EpProcessGroup g;
      g.memory = memory;
      g.ranks = devices >= 4 ? 4 : 2;
      g.gpu_per_rank = true;
      g.steps = 4;
      g.timeout_ms = 5000;
      g.placement = placement;
      std::vector<int> const codes = testing::run_ep_process_group(g);
      for (std::size_t r = 0; r < codes.size(); ++r) {
        std::printf("%s, %s, %d processes on %d GPUs: rank %zu exit code %d\n", name, placement,
                    g.ranks, g.ranks, r, codes[r]);
        CHECK(codes[r] == 0);
      }
    }
  }
}

}  // namespace
}  // namespace gcmoe::kernels
