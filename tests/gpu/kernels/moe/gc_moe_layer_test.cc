// The GC-MoE operator on one GPU (kernels/moe/gc_moe_layer.h): dispatch on the comm partition and
// the expert GEMM on the compute partition as concurrent roots of one CUDA graph, joined by the
// token-ring flags. Checked against the CPU reference and, bit for bit, against the sequential
// baseline (the same kernels on one stream) — across replays with new inputs, so a flag left over
// from the previous replay (an epoch that did not advance) would let the GEMM read stale rows.
#include "kernels/moe/gc_moe_layer.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <span>
#include <vector>

#include "tests/gpu/kernels/moe/moe_layer_fixture.h"
#include "tests/support/catch.h"
#include "tests/support/error_norm.h"

namespace gcmoe::kernels {
namespace {

using testing::MoeLayerCase;

// The sequential baseline's output for the fixture's current device x (the shared expert in its
// own launches, as GC-MoE runs it; the other placement is checked against it below).
std::vector<float> sequential_out(GcMoeLayer& layer, testing::MoeLayerFixture const& f,
                                  SharedExpertLaunch shared = SharedExpertLaunch::kSeparate) {
  auto out = cuda::DeviceBuffer<float>::allocate(f.x.size());
  REQUIRE(out.ok());
  REQUIRE(
      layer.steps().run(f.weights(), f.d_x.data(), f.c.tokens, out->data(), nullptr, shared).ok());
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  std::vector<float> host(f.x.size());
  REQUIRE(out->copy_to_host(host).ok());
  return host;
}

void run_case(MoeLayerCase const& c, GcMoeOptions const& options) {
  testing::MoeLayerFixture f = testing::make_moe_layer_fixture(c);
  auto layer = GcMoeLayer::create(f.config, c.tokens, 0, options);
  REQUIRE(layer.status().to_string() == "OK");
  REQUIRE(layer->prepare(f.weights(), f.d_x.data(), f.d_out.data(), c.tokens).to_string() == "OK");
  auto const nodes = layer->kernel_nodes(c.tokens);
  REQUIRE(nodes.ok());

  REQUIRE(layer->replay(c.tokens).ok());
  REQUIRE(layer->synchronize().to_string() == "OK");
  int const mismatches = f.selection_mismatches(layer->steps().topk_ids());
  std::vector<float> const out = f.out();
  double const error = testing::relative_l2_error(out, f.ref.out);
  std::vector<float> const baseline = sequential_out(*layer, f);
  bool const same = std::memcmp(out.data(), baseline.data(), out.size() * sizeof(float)) == 0;
  // The shared expert in the routed launches computes the same rows with the same kernels (FP8);
  // an FP8 shared expert beside MXFP4 routed ones cannot join their launch and is refused.
  bool same_fused = true;
  if (c.format == ExpertWeightFormat::kFp8Block128) {
    std::vector<float> const fused = sequential_out(*layer, f, SharedExpertLaunch::kWithRouted);
    same_fused = std::memcmp(fused.data(), baseline.data(), out.size() * 4) == 0;
  } else {
    CHECK(layer->steps()
              .run(f.weights(), f.d_x.data(), c.tokens, f.d_out.data(), nullptr,
                   SharedExpertLaunch::kWithRouted)
              .code() == StatusCode::kInvalidArgument);
  }
  std::printf(
      "gc-moe %s H=%d I=%d E=%d k=%d T=%d comm %d SMs compute %d SMs (overlapped without "
      "partition %d), %d kernel nodes: selection mismatches %d, rel_l2_error=%.3e, equal to "
      "sequential: %d (shared fused: %d)\n",
      f.family_name(), c.hidden, c.inter, c.experts, c.top_k, c.tokens, layer->comm_sms(c.tokens),
      layer->compute_sms(c.tokens), layer->plan().step(c.tokens).overlapped ? 1 : 0, *nodes,
      mismatches, error, same ? 1 : 0, same_fused ? 1 : 0);
  CHECK(mismatches == 0);
  CHECK(error < 2e-2);  // the bound of the sequential layer test (same kernels)
  CHECK(same);
  CHECK(same_fused);

  // New inputs each replay, no host work between them but the copy: every replay must equal
  // the baseline on its own x.
  std::mt19937_64 rng(c.seed + 99);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  int differing = 0;
  for (int replay = 0; replay < 3; ++replay) {
    for (auto& v : f.x) {
      v = normal(rng);
    }
    REQUIRE(f.d_x.copy_from_host(f.x).ok());
    REQUIRE(layer->replay(c.tokens).ok());
    REQUIRE(layer->synchronize().to_string() == "OK");
    std::vector<float> const again = f.out();
    std::vector<float> const expected = sequential_out(*layer, f);
    differing += std::memcmp(again.data(), expected.data(), again.size() * sizeof(float)) != 0;
  }
  std::printf("gc-moe T=%d: %d of 3 replays with new x differ from the sequential baseline\n",
              c.tokens, differing);
  CHECK(differing == 0);
}

TEST_CASE("GC-MoE layer equals the sequential baseline and the CPU reference (GLM-5.2)") {
  MoeLayerCase c;
  c.family = MoeFamily::kGlm52;
  c.tokens = GENERATE(1, 7, 40);
  c.top_k = 8;
  c.seed = 300 + static_cast<std::uint64_t>(c.tokens);
  run_case(c, {.comm_sms = 16});
}

TEST_CASE("GC-MoE layer at other comm partition sizes (DeepSeek-V4.1 semantics)") {
  MoeLayerCase c = testing::deepseek_small_case();
  c.tokens = 33;
  c.seed = 400;
  run_case(c, {.comm_sms = GENERATE(8, 48)});
}

TEST_CASE("GC-MoE layer with MXFP4 routed experts (DeepSeek-V4.1 checkpoint format)") {
  MoeLayerCase c = testing::deepseek_small_case(ExpertWeightFormat::kMxfp4);
  c.tokens = GENERATE(3, 33);
  c.seed = 450 + static_cast<std::uint64_t>(c.tokens);
  run_case(c, {.comm_sms = 16});
}

// No partition: the whole device, the GC-MoE body (the FP8 shared expert, apart from the MXFP4
// routed ones, on a second stream beside the routed path) or everything on one stream: each
// equals the sequential baseline bit for bit, across replays with new inputs.
TEST_CASE("GC-MoE without a partition, overlapped or sequential (DeepSeek-V4.1, MXFP4)") {
  MoeLayerCase c = testing::deepseek_small_case(ExpertWeightFormat::kMxfp4);
  c.tokens = GENERATE(3, 33);
  c.seed = 470 + static_cast<std::uint64_t>(c.tokens);
  bool const overlapped = GENERATE(true, false);
  auto plan = GcPartitionPlan::create({{.max_tokens = c.tokens, .overlapped = overlapped}});
  REQUIRE(plan.ok());
  run_case(c, {.plan = *plan});
}

TEST_CASE("GC-MoE without a partition, the whole GC-MoE body (GLM-5.2)") {
  MoeLayerCase c;
  c.family = MoeFamily::kGlm52;
  c.tokens = GENERATE(1, 40);
  c.top_k = 8;
  c.seed = 480 + static_cast<std::uint64_t>(c.tokens);
  auto plan = GcPartitionPlan::create({{.max_tokens = c.tokens, .overlapped = true}});
  REQUIRE(plan.ok());
  run_case(c, {.plan = *plan});
}

// A plan step may launch L2 after L1 instead of by programmatic dependent launch (the bench turns
// PDL off per bucket where it lost): the split and the overlapped body without it.
TEST_CASE("GC-MoE with L2 after L1 (a plan step without PDL; DeepSeek-V4.1, MXFP4)") {
  MoeLayerCase c = testing::deepseek_small_case(ExpertWeightFormat::kMxfp4);
  c.tokens = 33;
  c.seed = 490;
  bool const overlapped = GENERATE(true, false);
  auto plan = GcPartitionPlan::create({{.max_tokens = c.tokens,
                                        .comm_sms = overlapped ? 0 : 16,
                                        .overlapped = overlapped,
                                        .overlap_down = false}});
  REQUIRE(plan.ok());
  run_case(c, {.plan = *plan});
}

// A plan step with L2 acquiring L1's rows pass by pass (down_by_rows): a split and the overlapped
// body, FP8 (GLM-5.2, two L1 tile groups per row) and MXFP4 with the FP8 shared expert on its side
// stream; each equals the sequential baseline bit for bit across replays with new inputs (a
// counter not zeroed after a replay's L2 would let the next replay's L2 read rows early). The
// combine zeroes the counters: the graph has no node more than with L2 waiting for L1's grid, and
// every counter is zero after each replay.
TEST_CASE("GC-MoE with L2 acquiring L1's rows (a plan step with down_by_rows)") {
  bool const mxfp4 = GENERATE(false, true);
  MoeLayerCase c =
      mxfp4 ? testing::deepseek_small_case(ExpertWeightFormat::kMxfp4) : MoeLayerCase{};
  if (!mxfp4) {
    c.family = MoeFamily::kGlm52;
    c.top_k = 8;
    c.inter = 256;
  }
  c.tokens = GENERATE(2, 33);
  c.seed = 510 + static_cast<std::uint64_t>(c.tokens);
  bool const overlapped = GENERATE(true, false);
  GcPartitionStep step{
      .max_tokens = c.tokens, .comm_sms = overlapped ? 0 : 16, .overlapped = overlapped};
  auto plain_plan = GcPartitionPlan::create({step});
  step.down_by_rows = true;
  auto rows_plan = GcPartitionPlan::create({step});
  REQUIRE(plain_plan.ok());
  REQUIRE(rows_plan.ok());
  run_case(c, {.plan = *rows_plan});

  testing::MoeLayerFixture f = testing::make_moe_layer_fixture(c);
  auto plain = GcMoeLayer::create(f.config, c.tokens, 0, {.plan = *plain_plan});
  auto by_rows = GcMoeLayer::create(f.config, c.tokens, 0, {.plan = *rows_plan});
  REQUIRE(plain.ok());
  REQUIRE(by_rows.ok());
  REQUIRE(plain->prepare(f.weights(), f.d_x.data(), f.d_out.data(), c.tokens).ok());
  REQUIRE(by_rows->prepare(f.weights(), f.d_x.data(), f.d_out.data(), c.tokens).ok());
  auto const plain_nodes = plain->kernel_nodes(c.tokens);
  auto const rows_nodes = by_rows->kernel_nodes(c.tokens);
  REQUIRE(plain_nodes.ok());
  REQUIRE(rows_nodes.ok());
  std::printf("gc-moe by rows T=%d: %d kernel nodes, %d with L2 waiting for L1's grid\n", c.tokens,
              *rows_nodes, *plain_nodes);
  CHECK(*rows_nodes == *plain_nodes);
  std::vector<int> counters(by_rows->rows_done().size());
  for (int replay = 0; replay < 2; ++replay) {
    REQUIRE(by_rows->replay(c.tokens).ok());
    REQUIRE(by_rows->synchronize().ok());
    REQUIRE(by_rows->rows_done().copy_to_host(std::span<int>(counters)).ok());
    std::size_t const nonzero = static_cast<std::size_t>(
        std::count_if(counters.begin(), counters.end(), [](int v) { return v != 0; }));
    INFO("replay " << replay << ": " << nonzero << " counters left nonzero");
    CHECK(nonzero == 0);
  }
}

// The two PDL switches apart (GcMoeOptions::overlap_down, ::chain): the small kernels' chains
// without L2 by PDL, and L2 by PDL without the chains, in the overlapped body and in a split.
TEST_CASE("GC-MoE with the launch chains and L2 by PDL switched apart (DeepSeek-V4.1, MXFP4)") {
  MoeLayerCase c = testing::deepseek_small_case(ExpertWeightFormat::kMxfp4);
  c.tokens = GENERATE(1, 9);
  c.seed = 495;
  bool const overlapped = GENERATE(true, false);
  bool const chain = GENERATE(true, false);
  auto plan = GcPartitionPlan::create(
      {{.max_tokens = c.tokens, .comm_sms = overlapped ? 0 : 16, .overlapped = overlapped}});
  REQUIRE(plan.ok());
  run_case(c, {.plan = *plan, .overlap_down = !chain, .chain = chain});
}

TEST_CASE("GC-MoE with a per-bucket partition plan, no partition included") {
  MoeLayerCase c;
  c.family = MoeFamily::kGlm52;
  c.tokens = 24;
  c.top_k = 8;
  c.seed = 500;
  testing::MoeLayerFixture f = testing::make_moe_layer_fixture(c);
  // 1-2 tokens on 16 comm SMs, 3-8 on the whole device (no partition), 9-24 on 8.
  auto plan = GcPartitionPlan::create({{2, 16}, {8, 0}, {24, 8}});
  REQUIRE(plan.ok());
  auto layer = GcMoeLayer::create(f.config, c.tokens, 0, {.plan = *plan});
  REQUIRE(layer.status().to_string() == "OK");
  CHECK(layer->comm_sms(1) == 16);
  CHECK(layer->comm_sms(5) == 0);
  CHECK(layer->comm_sms(20) == 8);
  int device_sms = 0;
  REQUIRE(cudaDeviceGetAttribute(&device_sms, cudaDevAttrMultiProcessorCount, 0) == cudaSuccess);
  CHECK(layer->compute_sms(5) == device_sms);
  // Every bucket writes its own output; the replays alternate buckets (and so partitions and
  // streams) with no host synchronization between them.
  std::vector<int> const buckets = {1, 5, 20, 2, 8};
  std::vector<cuda::DeviceBuffer<float>> outs;
  for (int const t : buckets) {
    auto out = cuda::DeviceBuffer<float>::allocate(f.x.size());
    REQUIRE(out.ok());
    REQUIRE(out->fill_bytes(0xff).ok());
    REQUIRE(layer->prepare(f.weights(), f.d_x.data(), out->data(), t).to_string() == "OK");
    outs.push_back(std::move(out).value());
  }
  for (int round = 0; round < 2; ++round) {
    for (int const t : buckets) {
      REQUIRE(layer->replay(t).ok());
    }
  }
  REQUIRE(layer->synchronize().to_string() == "OK");
  int differing = 0;
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    int const t = buckets[i];
    std::size_t const values = static_cast<std::size_t>(t) * c.hidden;
    std::vector<float> got(f.x.size());
    REQUIRE(outs[i].copy_to_host(got).ok());
    auto expected_buffer = cuda::DeviceBuffer<float>::allocate(f.x.size());
    REQUIRE(expected_buffer.ok());
    REQUIRE(layer->steps()
                .run(f.weights(), f.d_x.data(), t, expected_buffer->data(), nullptr,
                     SharedExpertLaunch::kSeparate)
                .ok());
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    std::vector<float> expected(f.x.size());
    REQUIRE(expected_buffer->copy_to_host(expected).ok());
    differing += std::memcmp(got.data(), expected.data(), values * sizeof(float)) != 0;
  }
  std::printf(
      "gc-moe plan {1-2: 16 SMs, 3-8: none, 9-24: 8 SMs}: %d of %zu buckets differ from "
      "the sequential baseline after interleaved replays\n",
      differing, buckets.size());
  CHECK(differing == 0);
}

TEST_CASE("GC-MoE refuses buckets it was not prepared for") {
  MoeLayerCase c;
  c.tokens = 4;
  testing::MoeLayerFixture f = testing::make_moe_layer_fixture(c);
  auto layer = GcMoeLayer::create(f.config, c.tokens, 0, {});
  REQUIRE(layer.ok());
  CHECK(layer->replay(4).code() == StatusCode::kInvalidArgument);
  CHECK(layer->prepare(f.weights(), f.d_x.data(), f.d_out.data(), 5).code() ==
        StatusCode::kInvalidArgument);
  CHECK(GcMoeLayer::create(f.config, c.tokens, 0, {.comm_sms = 200}).status().code() ==
        StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gcmoe::kernels
