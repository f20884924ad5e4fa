// The GLM step's small pieces on hand-checkable inputs: top-k selection order and ties, the
// interleaved RoPE convention, the norms, and the projection's independence of the row count.

#include <cmath>
#include <vector>

#include "engine/model/glm/dsa_indexer.h"
#include "engine/model/glm/linear.h"
#include "engine/model/glm/norms.h"
#include "engine/model/glm/rope.h"
#include "tests/support/catch.h"
#include "tests/support/random.h"

namespace gcmoe::model::glm {
namespace {

bool near(double a, double b, double tolerance) {
  return std::abs(a - b) <= tolerance;
}

TEST_CASE("select_top_k: all when few, highest first, ties to the lower position", "[glm][ops]") {
  std::vector<float> const few = {0.5f, -1.0f, 2.0f};
  CHECK(select_top_k(few, 3) == std::vector<std::int32_t>{0, 1, 2});
  CHECK(select_top_k(few, 8) == std::vector<std::int32_t>{0, 1, 2});
  std::vector<float> const scores = {0.1f, 3.0f, -2.0f, 3.0f, 0.7f, 3.0f, NAN, 5.0f};
  CHECK(select_top_k(scores, 1) == std::vector<std::int32_t>{7});
  // Three tied at 3.0 for two places: positions 1 and 3 win over 5.
  CHECK(select_top_k(scores, 3) == std::vector<std::int32_t>{1, 3, 7});
  // NaN ranks below every number.
  CHECK(select_top_k(scores, 7) == std::vector<std::int32_t>{0, 1, 2, 3, 4, 5, 7});
}

TEST_CASE("RoPE rotates interleaved pairs by pos * theta^(-2i/d)", "[glm][ops]") {
  constexpr std::int64_t kDim = 8;
  constexpr double kTheta = 8e6;
  Rope const rope(kDim, kTheta);
  std::vector<float> x = testing::random_floats(2 * kDim, 3);
  std::vector<float> const before = x;
  rope.apply(x.data(), 2, kDim, 37);
  for (std::int64_t r = 0; r < 2; ++r) {
    for (std::int64_t i = 0; i < kDim / 2; ++i) {
      double const angle = 37.0 / std::pow(kTheta, 2.0 * static_cast<double>(i) / kDim);
      double const x0 = before[static_cast<std::size_t>(r * kDim + 2 * i)];
      double const x1 = before[static_cast<std::size_t>(r * kDim + 2 * i + 1)];
      CHECK(near(x[static_cast<std::size_t>(r * kDim + 2 * i)],
                 x0 * std::cos(angle) - x1 * std::sin(angle), 1e-5));
      CHECK(near(x[static_cast<std::size_t>(r * kDim + 2 * i + 1)],
                 x1 * std::cos(angle) + x0 * std::sin(angle), 1e-5));
    }
  }
  // q·k depends on the positions' difference only.
  std::vector<float> const q = testing::random_floats(kDim, 4);
  std::vector<float> const k = testing::random_floats(kDim, 5);
  auto const score = [&](std::int32_t m, std::int32_t n) {
    std::vector<float> qm = q;
    std::vector<float> kn = k;
    rope.apply(qm.data(), 1, kDim, m);
    rope.apply(kn.data(), 1, kDim, n);
    return dot(qm.data(), kn.data(), kDim);
  };
  CHECK(near(score(10, 3), score(107, 100), 1e-5));
  CHECK(!near(score(10, 3), score(10, 4), 1e-4));
}

TEST_CASE("RMSNorm and LayerNorm", "[glm][ops]") {
  std::vector<float> x = {1.0f, -2.0f, 3.0f, -4.0f};
  std::vector<float> const w = {1.0f, 2.0f, 0.5f, 1.0f};
  rms_norm(x, w, 0.0f);
  float const inv = 1.0f / std::sqrt(30.0f / 4.0f);
  CHECK(near(x[0], 1.0f * inv, 1e-5));
  CHECK(near(x[1], -4.0f * inv, 1e-5));
  CHECK(near(x[2], 1.5f * inv, 1e-5));
  std::vector<float> y = {1.0f, 2.0f, 3.0f, 6.0f};
  std::vector<float> const b = {0.0f, 1.0f, 0.0f, 0.0f};
  layer_norm(y, w, b, 0.0f);  // mean 3, var (4+1+0+9)/4 = 3.5
  float const s = 1.0f / std::sqrt(3.5f);
  CHECK(near(y[0], -2.0f * s, 1e-5));
  CHECK(near(y[1], -2.0f * s + 1.0f, 1e-5));
  CHECK(near(y[3], 3.0f * s, 1e-5));
}

TEST_CASE("linear gives each row the same bits whatever the row count", "[glm][ops]") {
  constexpr std::int64_t kIn = 37;
  constexpr std::int64_t kOut = 5;
  std::vector<float> const w = testing::random_floats(kIn * kOut, 6);
  std::vector<float> const x = testing::random_floats(7 * kIn, 7);
  std::vector<float> all(7 * kOut);
  linear(x, w, kIn, kOut, all);
  for (std::int64_t r = 0; r < 7; ++r) {
    std::vector<float> one(kOut);
    linear(std::span<float const>(x).subspan(static_cast<std::size_t>(r * kIn), kIn), w, kIn, kOut,
           one);
    for (std::int64_t o = 0; o < kOut; ++o) {
      CHECK(one[static_cast<std::size_t>(o)] == all[static_cast<std::size_t>(r * kOut + o)]);
      double exact = 0.0;
      for (std::int64_t i = 0; i < kIn; ++i) {
        exact += static_cast<double>(x[static_cast<std::size_t>(r * kIn + i)]) *
                 w[static_cast<std::size_t>(o * kIn + i)];
      }
      CHECK(near(one[static_cast<std::size_t>(o)], exact, 1e-5));
    }
  }
}

}  // namespace
}  // namespace gcmoe::model::glm
