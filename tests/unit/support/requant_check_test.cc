// The requantization check the GPU tests use (tests/support/requant_check.h): exact roundings
// pass, a rounding flip within the tolerance of a midpoint or a scale at a power-of-two boundary
// passes and is counted, a code two steps off or a wrong scale fails.
#include "tests/support/requant_check.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "engine/formats/activation_quant.h"
#include "engine/formats/e4m3.h"
#include "tests/support/catch.h"

namespace gcmoe::testing {
namespace {

using formats::ActivationRecipe;

TEST_CASE("requant check: the recipes' own quantization passes with no flips") {
  std::mt19937_64 rng(7);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  std::vector<float> x(512);
  for (float& v : x) {
    v = dist(rng);
  }
  for (ActivationRecipe const recipe :
       {ActivationRecipe::kDeepseekUe8m0, ActivationRecipe::kGlmDynamic}) {
    auto const q = formats::quantize_activations(recipe, x, 1, 512);
    REQUIRE(q.ok());
    RequantCheck const c = check_requantization(recipe, x, q->codes, q->scales, 128, 1e-3);
    CHECK(c.ok());
    CHECK(c.elements == 512);
    CHECK(c.flips == 0);
    CHECK(c.first_outside == -1);
    CHECK(c.worst_deviation == 0.0);
  }
}

// One group of 128 with amax 224 (DeepSeek scale 2^-1: the values below are ÷ 0.5 on the grid).
struct Group {
  std::vector<float> exact = std::vector<float>(128, 1.0f);
  std::vector<std::uint8_t> codes;
  std::vector<float> scales{0.5f};
  Group() {
    exact[0] = 224.0f;
    for (float const v : exact) {
      codes.push_back(formats::encode_e4m3(v / 0.5f));
    }
  }
  // The check of this group's codes and scale against its exact values.
  RequantCheck check(double tolerance) const {
    return check_requantization(ActivationRecipe::kDeepseekUe8m0, exact, codes, scales, 128,
                                tolerance);
  }
};

TEST_CASE("requant check: a flip at a rounding midpoint passes within the tolerance only") {
  Group g;
  // 84.0 ÷ 0.5 = 168, the midpoint of 160 and 176; 1e-5 above it rounds to 176, the kernel wrote
  // 160 (its accumulation put it just below).
  g.exact[5] = 84.0f * (1.0f + 1e-5f);
  g.codes[5] = formats::encode_e4m3(160.0f);
  REQUIRE(formats::encode_e4m3(g.exact[5] / 0.5f) == formats::encode_e4m3(176.0f));
  RequantCheck const loose = g.check(1e-3);
  CHECK(loose.ok());
  CHECK(loose.flips == 1);
  RequantCheck const exact = g.check(0.0);
  CHECK_FALSE(exact.ok());
  CHECK(exact.codes_outside == 1);
  CHECK(exact.first_outside == 5);
}

TEST_CASE("requant check: near zero the allowance follows the group's amax, not the value") {
  Group g;
  // 0.001 (0.002 on the grid): a dot product whose terms are of the group's size can come out
  // 1e-3 × 224 away, so the code of 0.25 (0.125 in value) passes and that of 2.0 does not.
  g.exact[7] = 0.001f;
  g.codes[7] = formats::encode_e4m3(0.25f);
  RequantCheck const near = g.check(1e-3);
  CHECK(near.ok());
  CHECK(near.flips == 1);
  CHECK(near.worst_deviation > 1e-4);
  CHECK(near.worst_deviation < 1e-3);
  g.codes[7] = formats::encode_e4m3(2.0f);
  RequantCheck const far = g.check(1e-3);
  CHECK_FALSE(far.ok());
  CHECK(far.codes_outside == 1);
  CHECK(far.worst_deviation > 1e-3);
}

TEST_CASE("requant check: a code two steps off fails") {
  Group g;
  g.exact[9] = 84.0f;                         // 168 on the grid: 160 or 176 by tie to even
  g.codes[9] = formats::encode_e4m3(144.0f);  // two steps below
  RequantCheck const c = g.check(1e-3);
  CHECK_FALSE(c.ok());
  CHECK(c.codes_outside == 1);
  CHECK(c.first_outside == 9);
}

TEST_CASE("requant check: either scale at a power-of-two boundary, no other") {
  Group g;
  // amax just above 224 = 448 × 2^-1: the recipe's scale is 2^0, a kernel whose amax came out
  // just below takes 2^-1 (and saturates the largest value at 448).
  g.exact[0] = 224.0f * (1.0f + 1e-6f);
  g.codes[0] = formats::kE4m3MaxCode;
  REQUIRE(formats::activation_group_scale(ActivationRecipe::kDeepseekUe8m0, g.exact[0]) == 1.0f);
  RequantCheck const boundary = g.check(1e-3);
  CHECK(boundary.ok());
  // A scale twice too small elsewhere is an error.
  g.exact[0] = 224.0f;
  g.scales[0] = 0.25f;
  RequantCheck const wrong = g.check(1e-3);
  CHECK_FALSE(wrong.ok());
  CHECK(wrong.scales_outside == 1);
  CHECK(wrong.first_outside == 0);
}

}  // namespace
}  // namespace gcmoe::testing
