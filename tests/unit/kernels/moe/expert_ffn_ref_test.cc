#include "kernels/moe/expert_ffn_ref.h"

#include <cmath>
#include <vector>

#include "tests/support/catch.h"
#include "tests/support/error_norm.h"
#include "tests/support/random.h"

namespace gcmoe::kernels {
namespace {

float silu(float v) {
  return v / (1.0f + std::exp(-v));
}

TEST_CASE("expert FFN computes down(silu(gate x) * up x) on a hand-checked case") {
  // H = 2, I = 1: gate reads x0, up reads x1, down writes 2h and 3h.
  std::vector<float> const gate = {1.0f, 0.0f};
  std::vector<float> const up = {0.0f, 1.0f};
  std::vector<float> const down = {2.0f, 3.0f};
  DenseExpertWeights const weights{2, 1, gate, up, down};
  std::vector<float> const x = {0.5f, -4.0f, 20.0f, 15.0f};  // two tokens
  std::vector<float> out(4);

  REQUIRE(expert_ffn_ref(weights, {}, x, {}, out).ok());
  float const h0 = silu(0.5f) * -4.0f;
  float const h1 = silu(20.0f) * 15.0f;
  CHECK(out[0] == Approx(2.0f * h0));
  CHECK(out[1] == Approx(3.0f * h0));
  CHECK(out[2] == Approx(2.0f * h1));
  CHECK(out[3] == Approx(3.0f * h1));

  SECTION("DeepSeek's clamp: up to ±limit, gate from above only") {
    ExpertFfnOptions options;
    options.swiglu_limit = 10.0f;
    REQUIRE(expert_ffn_ref(weights, options, x, {}, out).ok());
    CHECK(out[0] == Approx(2.0f * h0));  // inside the window: unchanged
    CHECK(out[2] == Approx(2.0f * silu(10.0f) * 10.0f));
    std::vector<float> const negative = {-30.0f, -30.0f};  // gate is not clamped from below
    std::vector<float> one(2);
    REQUIRE(expert_ffn_ref(weights, options, negative, {}, one).ok());
    CHECK(one[0] == Approx(2.0f * silu(-30.0f) * -10.0f));
  }
}

TEST_CASE(
    "routing weight before the down projection equals weighting the output (no clamp, "
    "no quantization)") {
  std::int64_t const h = 64;
  std::int64_t const inter = 32;
  std::int64_t const tokens = 5;
  auto const gate = testing::random_floats(inter * h, 11, -0.2f, 0.2f);
  auto const up = testing::random_floats(inter * h, 12, -0.2f, 0.2f);
  auto const down = testing::random_floats(h * inter, 13, -0.2f, 0.2f);
  auto const x = testing::random_floats(tokens * h, 14);
  auto const w = testing::random_floats(tokens, 15, 0.05f, 1.0f);
  DenseExpertWeights const weights{h, inter, gate, up, down};

  std::vector<float> plain(tokens * h);
  std::vector<float> before(tokens * h);
  REQUIRE(expert_ffn_ref(weights, {}, x, {}, plain).ok());
  ExpertFfnOptions options;
  options.weight_before_down = true;
  REQUIRE(expert_ffn_ref(weights, options, x, w, before).ok());
  std::vector<float> after(plain);
  for (std::int64_t t = 0; t < tokens; ++t) {
    for (std::int64_t c = 0; c < h; ++c) {
      after[t * h + c] *= w[t];
    }
  }
  CHECK(testing::relative_l2_error(before, after) < 1e-5);
}

TEST_CASE("FP8 activations move the FFN output by a few percent, not more") {
  std::int64_t const h = 256;
  std::int64_t const inter = 128;
  std::int64_t const tokens = 4;
  auto const gate = testing::random_floats(inter * h, 41, -0.05f, 0.05f);
  auto const up = testing::random_floats(inter * h, 42, -0.05f, 0.05f);
  auto const down = testing::random_floats(h * inter, 43, -0.05f, 0.05f);
  auto const x = testing::random_floats(tokens * h, 44, -2.0f, 2.0f);
  DenseExpertWeights const weights{h, inter, gate, up, down};
  std::vector<float> exact(tokens * h);
  std::vector<float> quantized(tokens * h);
  REQUIRE(expert_ffn_ref(weights, {}, x, {}, exact).ok());
  ExpertFfnOptions options;
  options.activation_recipe =
      GENERATE(formats::ActivationRecipe::kDeepseekUe8m0, formats::ActivationRecipe::kGlmDynamic);
  REQUIRE(expert_ffn_ref(weights, options, x, {}, quantized).ok());
  double const error = testing::relative_l2_error(quantized, exact);
  CHECK(error > 1e-4);  // the recipe really quantized
  CHECK(error < 0.08);
}

TEST_CASE("expert FFN rejects mismatched shapes") {
  std::vector<float> const w(8);
  DenseExpertWeights const weights{4, 2, w, w, w};
  std::vector<float> const x(6);  // not a multiple of H = 4
  std::vector<float> out(6);
  CHECK(expert_ffn_ref(weights, {}, x, {}, out).code() == StatusCode::kInvalidArgument);
  std::vector<float> const x4(4);
  std::vector<float> out4(4);
  ExpertFfnOptions options;
  options.weight_before_down = true;
  CHECK(expert_ffn_ref(weights, options, x4, {}, out4).code() == StatusCode::kInvalidArgument);
}

TEST_CASE("expert FFN's halves: h before requantization, then down, give the whole reference") {
  std::int64_t const h = 256;
  std::int64_t const inter = 128;
  std::int64_t const tokens = 3;
  auto const gate = testing::random_floats(inter * h, 51, -0.05f, 0.05f);
  auto const up = testing::random_floats(inter * h, 52, -0.05f, 0.05f);
  auto const down = testing::random_floats(h * inter, 53, -0.05f, 0.05f);
  auto const x = testing::random_floats(tokens * h, 54, -2.0f, 2.0f);
  auto const w = testing::random_floats(tokens, 55, 0.05f, 1.0f);
  DenseExpertWeights const weights{h, inter, gate, up, down};
  ExpertFfnOptions options;
  options.activation_recipe = formats::ActivationRecipe::kDeepseekUe8m0;
  options.swiglu_limit = 10.0f;
  options.weight_before_down = true;
  std::vector<float> whole(tokens * h);
  REQUIRE(expert_ffn_ref(weights, options, x, w, whole).ok());
  std::vector<float> hidden(tokens * inter);
  REQUIRE(expert_ffn_hidden_ref(weights, options, x, w, hidden).ok());
  REQUIRE(formats::apply_activation_recipe(options.activation_recipe, hidden, tokens, inter).ok());
  std::vector<float> halves(tokens * h);
  REQUIRE(expert_ffn_down_ref(weights, hidden, halves).ok());
  CHECK(halves == whole);
  // Shapes that do not fit are refused.
  std::vector<float> short_hidden(tokens * inter - 1);
  CHECK(expert_ffn_hidden_ref(weights, options, x, w, short_hidden).code() ==
        StatusCode::kInvalidArgument);
  CHECK(expert_ffn_down_ref(weights, short_hidden, halves).code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gcmoe::kernels
