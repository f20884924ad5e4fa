// One whole MoE layer on the GPU (router → align & sort → dispatch → WGMMA expert GEMMs → shared
// expert → combine, kernels/moe/moe_layer_sequential.h) against the CPU reference
// kernels/moe/moe_layer_ref.h, on random tiny layers of GLM-5.2 and DeepSeek-V4.1 semantics with
// FP8 experts (128×128 scales) — and DeepSeek-V4.1 with MXFP4 routed experts and the FP8 shared
// expert apart, as its checkpoint stores them — and each family's FP8 activation recipe.
#include "kernels/moe/moe_layer_sequential.h"

#include <cstdio>

#include "tests/gpu/kernels/moe/moe_layer_fixture.h"
#include "tests/support/catch.h"
#include "tests/support/error_norm.h"

namespace gcmoe::kernels {
namespace {

using testing::MoeLayerCase;

void run_case(MoeLayerCase const& c) {
  testing::MoeLayerFixture const f = testing::make_moe_layer_fixture(c);
  auto layer = MoeLayerSequential::create(f.config, c.tokens);
  REQUIRE(layer.ok());
  bool const mxfp4 = c.format == ExpertWeightFormat::kMxfp4;
  if (mxfp4) {
    // The FP8 shared expert cannot join the MXFP4 routed launch: refused, not run wrong.
    Status const fused = layer->run(f.weights(), f.d_x.data(), c.tokens, f.d_out.data(), nullptr,
                                    SharedExpertLaunch::kWithRouted);
    CHECK(fused.code() == StatusCode::kInvalidArgument);
  }
  REQUIRE(layer
              ->run(f.weights(), f.d_x.data(), c.tokens, f.d_out.data(), nullptr,
                    mxfp4 ? SharedExpertLaunch::kSeparate : SharedExpertLaunch::kWithRouted)
              .to_string() == "OK");
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  int const mismatches = f.selection_mismatches(layer->topk_ids());
  double const error = testing::relative_l2_error(f.out(), f.ref.out);
  std::printf(
      "moe layer (sequential, GPU) %s %s H=%d I=%d E=%d k=%d T=%d: selection mismatches %d, "
      "rel_l2_error=%.3e\n",
      f.family_name(), mxfp4 ? "mxfp4 routed" : "fp8", c.hidden, c.inter, c.experts, c.top_k,
      c.tokens, mismatches, error);
  CHECK(mismatches == 0);
  // FP8 GEMMs on both sides, WGMMA's reduced-precision accumulation inside a 128-K chunk, and a
  // requantized h: 2e-2 leaves room for that; a wrong row, weight or scale gives errors of order 1.
  CHECK(error < 2e-2);
}

TEST_CASE("MoE layer on the GPU matches the CPU reference (GLM-5.2 semantics)") {
  MoeLayerCase c;
  c.family = MoeFamily::kGlm52;
  c.tokens = GENERATE(1, 7, 40);
  c.top_k = 8;
  c.seed = 100 + static_cast<std::uint64_t>(c.tokens);
  run_case(c);
}

TEST_CASE("MoE layer on the GPU matches the CPU reference (DeepSeek-V4.1 semantics)") {
  MoeLayerCase c = testing::deepseek_small_case();
  c.tokens = GENERATE(1, 33);
  c.seed = 200 + static_cast<std::uint64_t>(c.tokens);
  run_case(c);
}

TEST_CASE("MoE layer on the GPU matches the CPU reference (DeepSeek-V4.1, MXFP4 routed experts)") {
  MoeLayerCase c = testing::deepseek_small_case(ExpertWeightFormat::kMxfp4);
  c.tokens = GENERATE(1, 9, 40);
  c.seed = 250 + static_cast<std::uint64_t>(c.tokens);
  run_case(c);
}

}  // namespace
}  // namespace gcmoe::kernels
