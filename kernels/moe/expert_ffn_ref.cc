#include "kernels/moe/expert_ffn_ref.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/common/check.h"

namespace gcmoe::kernels {
namespace {

// Row-major y[r, o] = sum_i a[r, i] * w[o, i], fp32 accumulation in i order (as a K-loop does).
void matmul_nt(std::span<float const> a, std::span<float const> w, std::int64_t rows,
               std::int64_t out_features, std::int64_t in_features, std::span<float> y) {
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t o = 0; o < out_features; ++o) {
      float acc = 0.0f;
      for (std::int64_t i = 0; i < in_features; ++i) {
        acc += a[r * in_features + i] * w[o * in_features + i];
      }
      y[r * out_features + o] = acc;
    }
  }
}

}  // namespace

Status expert_ffn_ref(DenseExpertWeights const& weights, ExpertFfnOptions const& options,
                      std::span<float const> x, std::span<float const> route_weight,
                      std::span<float> out) {
  std::int64_t const h = weights.hidden;
  std::int64_t const inter = weights.intermediate;
  GCMOE_CHECK_ARG(h > 0 && inter > 0, "expert dims must be positive, got H={} I={}", h, inter);
  GCMOE_CHECK_ARG(static_cast<std::int64_t>(weights.gate.size()) == inter * h &&
                      static_cast<std::int64_t>(weights.up.size()) == inter * h &&
                      static_cast<std::int64_t>(weights.down.size()) == h * inter,
                  "expert weights must be gate/up [{0},{1}] and down [{1},{0}]", inter, h);
  GCMOE_CHECK_ARG(static_cast<std::int64_t>(x.size()) % h == 0, "x has {} floats, not rows of {}",
                  x.size(), h);
  std::int64_t const tokens = static_cast<std::int64_t>(x.size()) / h;
  GCMOE_CHECK_ARG(out.size() == x.size(), "out has {} floats, x has {}", out.size(), x.size());
  GCMOE_CHECK_ARG(
      !options.weight_before_down || static_cast<std::int64_t>(route_weight.size()) == tokens,
      "{} routing weights for {} tokens", route_weight.size(), tokens);
  GCMOE_CHECK_ARG(options.swiglu_limit >= 0.0f, "swiglu_limit {} is negative",
                  options.swiglu_limit);

  std::vector<float> xq(x.begin(), x.end());
  GCMOE_RETURN_IF_ERROR(formats::apply_activation_recipe(options.activation_recipe, xq, tokens, h));
  std::vector<float> gate(static_cast<std::size_t>(tokens * inter));
  std::vector<float> up(gate.size());
  matmul_nt(xq, weights.gate, tokens, inter, h, gate);
  matmul_nt(xq, weights.up, tokens, inter, h, up);

  float const limit = options.swiglu_limit;
  std::vector<float> act(gate.size());
  for (std::int64_t t = 0; t < tokens; ++t) {
    for (std::int64_t i = 0; i < inter; ++i) {
      std::size_t const at = static_cast<std::size_t>(t * inter + i);
      float g = gate[at];
      float u = up[at];
      if (limit > 0.0f) {
        u = std::clamp(u, -limit, limit);
        g = std::min(g, limit);
      }
      float value = g / (1.0f + std::exp(-g)) * u;
      if (options.weight_before_down) {
        value *= route_weight[static_cast<std::size_t>(t)];
      }
      act[at] = value;
    }
  }
  GCMOE_RETURN_IF_ERROR(
      formats::apply_activation_recipe(options.activation_recipe, act, tokens, inter));
  matmul_nt(act, weights.down, tokens, h, inter, out);
  return Status();
}

}  // namespace gcmoe::kernels
