#include "kernels/moe/moe_layer_ref.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "tests/support/catch.h"
#include "tests/support/error_norm.h"
#include "tests/support/random.h"

namespace gcmoe::kernels {
namespace {

constexpr std::int32_t kHidden = 64;
constexpr std::int32_t kInter = 32;
constexpr std::int32_t kExperts = 8;
constexpr std::int32_t kTopK = 2;
constexpr std::int32_t kTokens = 6;

// Owns the random tensors a MoeLayerWeights points into.
struct Layer {
  std::vector<float> gate;
  std::vector<float> bias;
  std::vector<std::int32_t> table;
  std::vector<std::vector<float>> expert_tensors;  // gate, up, down per expert, then shared
  MoeLayerWeights weights;
};

DenseExpertWeights expert_view(std::vector<std::vector<float>> const& t, std::size_t first) {
  return {.hidden = kHidden,
          .intermediate = kInter,
          .gate = t[first],
          .up = t[first + 1],
          .down = t[first + 2]};
}

// `scale` large enough pushes gate/up activations past the DeepSeek clamp of 10.
void make_layer(Layer& layer, std::uint64_t seed, float scale, bool hashed) {
  layer.gate = testing::random_floats(kExperts * kHidden, seed, -0.3f, 0.3f);
  if (hashed) {
    layer.table = {0, 3, 5, 1, 7, 2, 4, 6, 2, 5};  // vocab 5 x top-2
  } else {
    layer.bias = testing::random_floats(kExperts, seed + 1, -0.2f, 0.2f);
  }
  for (std::int32_t e = 0; e <= kExperts; ++e) {  // kExperts routed + 1 shared
    for (int m = 0; m < 3; ++m) {
      layer.expert_tensors.push_back(testing::random_floats(
          kHidden * kInter, seed + 10 + static_cast<std::uint64_t>(e * 3 + m), -scale, scale));
    }
  }
  layer.weights.gate_weight = layer.gate;
  layer.weights.bias = layer.bias;
  layer.weights.hash_table = layer.table;
  for (std::int32_t e = 0; e < kExperts; ++e) {
    layer.weights.experts.push_back(
        expert_view(layer.expert_tensors, static_cast<std::size_t>(e) * 3));
  }
  layer.weights.shared = expert_view(layer.expert_tensors, static_cast<std::size_t>(kExperts) * 3);
}

// The textbook layer, written independently of the reference: double precision, the routing
// weight applied to the expert's output (equal in exact math to DeepSeek's before-down).
std::vector<float> textbook_layer(MoeLayerConfig const& config, Layer const& layer,
                                  std::vector<float> const& x, RouterRefResult const& routing) {
  auto ffn = [&](DenseExpertWeights const& w, std::size_t t, std::vector<double>& y) {
    std::vector<double> h(kInter);
    for (std::size_t i = 0; i < kInter; ++i) {
      double g = 0.0;
      double u = 0.0;
      for (std::size_t c = 0; c < kHidden; ++c) {
        g += static_cast<double>(w.gate[i * kHidden + c]) * x[t * kHidden + c];
        u += static_cast<double>(w.up[i * kHidden + c]) * x[t * kHidden + c];
      }
      double const limit = config.expert.swiglu_limit;
      if (limit > 0.0) {
        u = std::clamp(u, -limit, limit);
        g = std::min(g, limit);
      }
      h[i] = g / (1.0 + std::exp(-g)) * u;
    }
    for (std::size_t c = 0; c < kHidden; ++c) {
      double acc = 0.0;
      for (std::size_t i = 0; i < kInter; ++i) {
        acc += static_cast<double>(w.down[c * kInter + i]) * h[i];
      }
      y[c] = acc;
    }
  };
  std::vector<float> out(x.size());
  std::vector<double> y(kHidden);
  for (std::size_t t = 0; t < kTokens; ++t) {
    std::vector<double> acc(kHidden, 0.0);
    for (std::size_t j = 0; j < kTopK; ++j) {
      auto const e = static_cast<std::size_t>(routing.topk_ids[t * kTopK + j]);
      ffn(layer.weights.experts[e], t, y);
      for (std::size_t c = 0; c < kHidden; ++c) {
        acc[c] += routing.topk_weights[t * kTopK + j] * y[c];
      }
    }
    ffn(*layer.weights.shared, t, y);
    for (std::size_t c = 0; c < kHidden; ++c) {
      out[t * kHidden + c] = static_cast<float>(acc[c] + y[c]);
    }
  }
  return out;
}

TEST_CASE("MoE layer reference equals the textbook layer for each family (exact fp32)") {
  struct Case {
    MoeFamily family;
    char const* name;
    float scale;
    bool hashed;
  };
  for (Case const c : {Case{MoeFamily::kGlm52, "glm5.2", 0.3f, false},
                       Case{MoeFamily::kDeepseekV41, "deepseek_v4.1", 0.3f, false},
                       Case{MoeFamily::kDeepseekV41, "deepseek_v4.1 clamped", 3.0f, false},
                       Case{MoeFamily::kDeepseekV4, "deepseek_v4 hash layer", 0.3f, true}}) {
    Layer layer;
    make_layer(layer, 500, c.scale, c.hashed);
    std::vector<float> const x = testing::random_floats(kTokens * kHidden, 900);
    std::vector<std::int32_t> const token_ids = {4, 0, 2, 2, 1, 3};
    MoeLayerConfig const config =
        moe_layer_config(c.family, kHidden, kInter, kExperts, kTopK, /*fp8_activations=*/false);
    auto const result = moe_layer_ref(config, layer.weights, x, token_ids);
    REQUIRE(result.ok());
    std::vector<float> const expected = textbook_layer(config, layer, x, result->routing);
    double const error = testing::relative_l2_error(result->out, expected);
    std::printf("moe layer %s: rel_l2_error vs textbook = %.3e\n", c.name, error);
    CHECK(error < 4e-3);  // the output is rounded once to bf16 (2^-9 relative per element)
    if (c.hashed) {
      for (std::size_t t = 0; t < kTokens; ++t) {
        for (std::size_t j = 0; j < kTopK; ++j) {
          CHECK(result->routing.topk_ids[t * kTopK + j] ==
                layer.table[static_cast<std::size_t>(token_ids[t]) * kTopK + j]);
        }
      }
    }
  }
}

TEST_CASE("MoE layer reference: the clamp matters when activations pass 10") {
  Layer layer;
  make_layer(layer, 501, 3.0f, false);
  std::vector<float> const x = testing::random_floats(kTokens * kHidden, 901);
  MoeLayerConfig clamped =
      moe_layer_config(MoeFamily::kDeepseekV41, kHidden, kInter, kExperts, kTopK, false);
  MoeLayerConfig unclamped = clamped;
  unclamped.expert.swiglu_limit = 0.0f;
  auto const a = moe_layer_ref(clamped, layer.weights, x, {});
  auto const b = moe_layer_ref(unclamped, layer.weights, x, {});
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  double const diff = testing::relative_l2_error(a->out, b->out);
  std::printf("moe layer clamp on vs off: rel diff %.3e\n", diff);
  CHECK(diff > 1e-2);
}

TEST_CASE("MoE layer reference: FP8 activation recipes move the result by FP8 rounding") {
  for (MoeFamily const family : {MoeFamily::kGlm52, MoeFamily::kDeepseekV41}) {
    Layer layer;
    make_layer(layer, 502, 0.3f, false);
    std::vector<float> const x = testing::random_floats(kTokens * kHidden, 902);
    auto const exact = moe_layer_ref(
        moe_layer_config(family, kHidden, kInter, kExperts, kTopK, false), layer.weights, x, {});
    auto const fp8 = moe_layer_ref(moe_layer_config(family, kHidden, kInter, kExperts, kTopK, true),
                                   layer.weights, x, {});
    REQUIRE(exact.ok());
    REQUIRE(fp8.ok());
    double const diff = testing::relative_l2_error(fp8->out, exact->out);
    std::printf("moe layer %s fp8 vs exact: rel diff %.3e\n",
                family == MoeFamily::kGlm52 ? "glm5.2" : "deepseek_v4.1", diff);
    CHECK(diff > 1e-4);  // e4m3 has 3 mantissa bits: visibly different ...
    CHECK(diff < 0.1);   // ... but the same function
  }
}

TEST_CASE("MoE layer reference, DeepSeek-V4.1: image-span tokens route with bias_vl") {
  Layer layer;
  make_layer(layer, 504, 0.3f, false);
  std::vector<float> const x = testing::random_floats(kTokens * kHidden, 904);
  MoeLayerConfig const config =
      moe_layer_config(MoeFamily::kDeepseekV41, kHidden, kInter, kExperts, kTopK, false);
  std::vector<std::uint8_t> const image_mask = {0, 1, 0, 1, 1, 0};
  auto const text = moe_layer_ref(config, layer.weights, x, {});
  REQUIRE(text.ok());
  // bias_vl equal to bias: the mask changes nothing.
  layer.weights.bias_vl = layer.bias;
  auto const same = moe_layer_ref(config, layer.weights, x, {}, image_mask);
  REQUIRE(same.ok());
  CHECK(same->out == text->out);
  // bias_vl pushing expert 0 to the top: exactly the image tokens select it.
  std::vector<float> bias_vl(kExperts, 0.0f);
  bias_vl[0] = 100.0f;
  layer.weights.bias_vl = bias_vl;
  auto const image = moe_layer_ref(config, layer.weights, x, {}, image_mask);
  REQUIRE(image.ok());
  for (std::size_t t = 0; t < kTokens; ++t) {
    CHECK((image->routing.topk_ids[t * kTopK] == 0) == (image_mask[t] != 0));
  }
}

TEST_CASE("MoE layer reference rejects mismatched weights") {
  Layer layer;
  make_layer(layer, 503, 0.3f, false);
  layer.weights.experts.pop_back();
  std::vector<float> const x = testing::random_floats(kTokens * kHidden, 903);
  auto const r =
      moe_layer_ref(moe_layer_config(MoeFamily::kGlm52, kHidden, kInter, kExperts, kTopK, false),
                    layer.weights, x, {});
  CHECK(r.status().code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gcmoe::kernels
