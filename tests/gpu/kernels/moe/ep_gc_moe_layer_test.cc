// The GC-MoE operator of an expert-parallel rank (kernels/moe/ep_gc_moe_layer.h) across GPUs, one
// rank per GPU driven from this process: a plan with a split bucket (comm partition) and a
// sequential bucket (no partition), replays interleaving them with new inputs each time; every
// rank's output must equal the single-rank layer on its tokens bit for bit. Needs 2 GPUs.
#include "kernels/moe/ep_gc_moe_layer.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "tests/gpu/kernels/moe/ep_moe_rank_process.h"
#include "tests/gpu/kernels/moe/moe_layer_fixture.h"
#include "tests/support/catch.h"
#include "tests/support/error_norm.h"

namespace gcmoe::kernels {
namespace {

using cuda::DeviceBuffer;

TEST_CASE("EP GC-MoE layer across GPUs: split and sequential buckets equal the single-rank layer") {
  int const ranks = testing::multi_gpu_ranks();
  testing::MoeLayerCase c;
  c.experts = 16;
  c.top_k = 8;
  c.tokens = 12;
  c.seed = 900;
  testing::MoeLayerFixture f = testing::make_moe_layer_fixture(c);
  auto single = MoeLayerSequential::create(f.config, c.tokens);
  REQUIRE(single.ok());
  // Up to 4 tokens on a 16-SM comm partition, 5..12 sequential with the shared expert fused.
  auto plan = GcPartitionPlan::create(
      {{.max_tokens = 4, .comm_sms = 16}, {.max_tokens = 12, .comm_sms = 0}});
  REQUIRE(plan.ok());

  std::vector<int> rank_devices;
  for (int r = 0; r < ranks; ++r) {
    rank_devices.push_back(r);
  }
  auto memories = cuda::SymmetricMemory::allocate_local_group(
      EpMoeRank::symmetric_bytes(f.config, c.tokens, ranks), rank_devices);
  REQUIRE(memories.ok());
  std::vector<testing::RankWeights> shares;
  std::vector<DeviceBuffer<float>> xs, outs;
  std::vector<EpGcMoeLayer> layers;
  std::vector<int> const buckets = {3, 12};
  for (int r = 0; r < ranks; ++r) {
    REQUIRE(cudaSetDevice(r) == cudaSuccess);
    shares.push_back(testing::upload_rank_weights(f, ranks, r));
    auto x = DeviceBuffer<float>::allocate(static_cast<std::size_t>(c.tokens) * c.hidden);
    auto out = DeviceBuffer<float>::allocate(static_cast<std::size_t>(c.tokens) * c.hidden);
    REQUIRE((x.ok() && out.ok()));
    xs.push_back(std::move(x).value());
    outs.push_back(std::move(out).value());
    auto layer = EpGcMoeLayer::create(f.config, c.tokens, ranks, r, r,
                                      std::move((*memories)[static_cast<std::size_t>(r)]),
                                      {.plan = *plan, .timeout_ns = 5'000'000'000});
    REQUIRE(layer.status().to_string() == "OK");
    for (int const t : buckets) {
      REQUIRE(layer->prepare(shares.back().weights, xs.back().data(), outs.back().data(), t)
                  .to_string() == "OK");
    }
    layers.push_back(std::move(layer).value());
  }
  CHECK(layers[0].comm_sms(3) >= 16);
  CHECK(layers[0].comm_sms(12) == 0);

  std::mt19937_64 rng(c.seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  int not_equal = 0;
  double worst = 0.0;
  int const order[] = {3, 12, 3, 3, 12, 12};
  for (int const t : order) {
    std::vector<std::vector<float>> host(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r) {
      auto& x = host[static_cast<std::size_t>(r)];
      x.resize(static_cast<std::size_t>(c.tokens) * c.hidden);
      for (auto& v : x) {
        v = normal(rng);
      }
      REQUIRE(cudaSetDevice(r) == cudaSuccess);
      REQUIRE(xs[static_cast<std::size_t>(r)].copy_from_host(x).ok());
    }
    for (int r = 0; r < ranks; ++r) {
      REQUIRE(cudaSetDevice(r) == cudaSuccess);
      REQUIRE(layers[static_cast<std::size_t>(r)].replay(t).ok());
    }
    for (int r = 0; r < ranks; ++r) {
      REQUIRE(cudaSetDevice(r) == cudaSuccess);
      REQUIRE(layers[static_cast<std::size_t>(r)].synchronize().to_string() == "OK");
    }
    for (int r = 0; r < ranks; ++r) {
      std::size_t const values = static_cast<std::size_t>(t) * c.hidden;
      std::vector<float> got(values);
      REQUIRE(cudaMemcpy(got.data(), outs[static_cast<std::size_t>(r)].data(), values * 4,
                         cudaMemcpyDefault) == cudaSuccess);
      REQUIRE(cudaSetDevice(0) == cudaSuccess);
      REQUIRE(f.d_x.copy_from_host(host[static_cast<std::size_t>(r)]).ok());
      std::vector<float> const expected = testing::single_rank_out(*single, f, f.d_x.data(), t);
      not_equal += std::memcmp(got.data(), expected.data(), values * 4) != 0;
      worst = std::max(worst, testing::relative_l2_error(got, expected));
    }
  }
  std::printf(
      "ep gc-moe layer across %d GPUs, plan {1-4: 16 SMs, 5-12: none}: 6 replays (3, 12, 3, 3, "
      "12, 12 tokens per rank), rank-replays not bit-equal to the single-rank layer: %d, worst "
      "rel_l2 %.3e\n",
      ranks, not_equal, worst);
  CHECK(not_equal == 0);
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
}

}  // namespace
}  // namespace gcmoe::kernels
