// FP8 activation recipes: DeepSeek ue8m0 1x128, GLM dynamic 1x128, exact fp32 pass-through.
#include "engine/formats/activation_quant.h"

#include <bit>
#include <cmath>
#include <vector>

#include "engine/formats/e4m3.h"
#include "tests/support/catch.h"
#include "tests/unit/formats/block_test_support.h"

namespace gcmoe::formats {
namespace {

using testing::gaussian;
using testing::is_power_of_two;
using testing::relative_l2;

float group_amax(std::vector<float> const& x, std::int64_t const begin, std::int64_t const end) {
  float amax = 0.0f;
  for (std::int64_t i = begin; i < end; ++i) {
    amax = std::max(amax, std::fabs(x[static_cast<std::size_t>(i)]));
  }
  return amax;
}

TEST_CASE("DeepSeek activations: power-of-two scales per 1x128 group, amax/scale in (224, 448]") {
  std::int64_t const tokens = 5;
  std::int64_t const hidden = 384;
  std::vector<float> const x = gaussian(static_cast<std::size_t>(tokens * hidden), 1.5f, 21);
  auto const q = quantize_activations(ActivationRecipe::kDeepseekUe8m0, x, tokens, hidden);
  REQUIRE(q.ok());
  REQUIRE(q->scales.size() == static_cast<std::size_t>(tokens * 3));
  for (std::int64_t t = 0; t < tokens; ++t) {
    for (std::int64_t g = 0; g < 3; ++g) {
      float const scale = q->scales[static_cast<std::size_t>(t * 3 + g)];
      float const amax = group_amax(x, t * hidden + g * 128, t * hidden + (g + 1) * 128);
      CHECK(is_power_of_two(scale));
      CHECK(amax / scale > 224.0f);
      CHECK(amax / scale <= 448.0f);
    }
  }
  std::vector<float> back(x.size());
  REQUIRE(dequantize_activations(*q, back).ok());
  double const error = relative_l2(back, x);
  INFO("relative L2 error " << error);
  CHECK(error < 0.035);
}

TEST_CASE("GLM activations: f32 scale amax/448, so each group's largest element is ±448") {
  std::int64_t const tokens = 3;
  std::int64_t const hidden = 200;  // ragged: groups of 128 and 72
  std::vector<float> x = gaussian(static_cast<std::size_t>(tokens * hidden), 0.7f, 22);
  auto const q = quantize_activations(ActivationRecipe::kGlmDynamic, x, tokens, hidden);
  REQUIRE(q.ok());
  REQUIRE(q->scales.size() == static_cast<std::size_t>(tokens * 2));
  for (std::int64_t t = 0; t < tokens; ++t) {
    CHECK(q->scales[static_cast<std::size_t>(t * 2)] ==
          group_amax(x, t * hidden, t * hidden + 128) / kE4m3Max);
    CHECK(q->scales[static_cast<std::size_t>(t * 2 + 1)] ==
          group_amax(x, t * hidden + 128, (t + 1) * hidden) / kE4m3Max);
  }
  int max_codes = 0;
  for (std::uint8_t const c : q->codes) {
    max_codes += (c & 0x7f) == kE4m3MaxCode ? 1 : 0;
  }
  CHECK(max_codes >= tokens * 2);
  std::vector<float> y = x;
  REQUIRE(apply_activation_recipe(ActivationRecipe::kGlmDynamic, y, tokens, hidden).ok());
  CHECK(y != x);
  CHECK(relative_l2(y, x) < 0.035);
}

TEST_CASE("exact fp32 recipe leaves activations bit-identical and has no FP8 form") {
  std::vector<float> const x = gaussian(256, 1.0f, 23);
  std::vector<float> y = x;
  REQUIRE(apply_activation_recipe(ActivationRecipe::kExactFp32, y, 2, 128).ok());
  for (std::size_t i = 0; i < x.size(); ++i) {
    CHECK(std::bit_cast<std::uint32_t>(y[i]) == std::bit_cast<std::uint32_t>(x[i]));
  }
  CHECK(quantize_activations(ActivationRecipe::kExactFp32, x, 2, 128).status().code() ==
        StatusCode::kInvalidArgument);
}

TEST_CASE("an all-zero token gets the recipe's floor scale and decodes to zeros") {
  std::vector<float> const zeros(128, 0.0f);
  auto const ds = quantize_activations(ActivationRecipe::kDeepseekUe8m0, zeros, 1, 128);
  REQUIRE(ds.ok());
  CHECK(ds->scales[0] == std::ldexp(1.0f, -22));  // 2^ceil(log2(1e-4 / 448))
  auto const glm = quantize_activations(ActivationRecipe::kGlmDynamic, zeros, 1, 128);
  REQUIRE(glm.ok());
  CHECK(glm->scales[0] == 1e-10f / 448.0f);
  std::vector<float> back(128, 1.0f);
  REQUIRE(dequantize_activations(*glm, back).ok());
  CHECK(back == zeros);
}

TEST_CASE("activation recipes reject mismatched sizes") {
  std::vector<float> const x(100, 1.0f);
  CHECK(quantize_activations(ActivationRecipe::kGlmDynamic, x, 2, 128).status().code() ==
        StatusCode::kInvalidArgument);
  std::vector<float> y(100, 1.0f);
  CHECK(apply_activation_recipe(ActivationRecipe::kDeepseekUe8m0, y, 1, 128, 0).code() ==
        StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gcmoe::formats
