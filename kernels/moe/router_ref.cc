#include "kernels/moe/router_ref.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/common/check.h"

namespace gcmoe::kernels {

RouterParams deepseek_v4_router_params() {
  return {.score = RouterScore::kSqrtSoftplus,
          .renormalize = true,
          .renorm_epsilon = 0.0f,
          .routed_scaling = 1.5f};
}

RouterParams deepseek_v41_router_params() {
  RouterParams params = deepseek_v4_router_params();
  params.gate_temperature = 1.0f;  // `gate_temp` is absent from the release config
  return params;
}

RouterParams glm5_router_params() {
  return {.score = RouterScore::kSigmoid,
          .renormalize = true,
          .renorm_epsilon = 1e-20f,
          .routed_scaling = 2.5f};
}

Status validate_router_shape(RouterShape const& shape) {
  GCMOE_CHECK_ARG(shape.num_tokens >= 0, "router: negative token count {}", shape.num_tokens);
  GCMOE_CHECK_ARG(shape.hidden >= 1, "router: hidden size {} must be positive", shape.hidden);
  GCMOE_CHECK_ARG(shape.num_experts >= 1 && shape.num_experts <= kRouterMaxExperts,
                  "router: {} experts, supported 1..{}", shape.num_experts, kRouterMaxExperts);
  GCMOE_CHECK_ARG(shape.top_k >= 1 && shape.top_k <= std::min(shape.num_experts, kRouterMaxTopK),
                  "router: top-{} of {} experts, supported 1..min(E, {})", shape.top_k,
                  shape.num_experts, kRouterMaxTopK);
  return Status();
}

float router_score(RouterScore score, float logit) {
  switch (score) {
    case RouterScore::kSqrtSoftplus:
      return std::sqrt(logit > 20.0f ? logit : std::log1p(std::exp(logit)));
    case RouterScore::kSigmoid:
      return 1.0f / (1.0f + std::exp(-logit));
  }
  return 0.0f;
}

StatusOr<RouterRefResult> router_ref(RouterRefInputs const& in, RouterShape const& shape,
                                     RouterParams const& params) {
  GCMOE_RETURN_IF_ERROR(validate_router_shape(shape));
  auto const t_count = static_cast<std::size_t>(shape.num_tokens);
  auto const h = static_cast<std::size_t>(shape.hidden);
  auto const e_count = static_cast<std::size_t>(shape.num_experts);
  auto const k = static_cast<std::size_t>(shape.top_k);
  GCMOE_CHECK_ARG(in.x.size() == t_count * h, "router: x has {} values, want {}", in.x.size(),
                  t_count * h);
  GCMOE_CHECK_ARG(in.gate_weight.size() == e_count * h, "router: gate has {} values, want {}",
                  in.gate_weight.size(), e_count * h);
  GCMOE_CHECK_ARG(in.bias.empty() || in.bias.size() == e_count, "router: bias has {} values",
                  in.bias.size());
  GCMOE_CHECK_ARG(in.image_mask.empty() || in.image_mask.size() == t_count,
                  "router: image mask has {} entries for {} tokens", in.image_mask.size(), t_count);
  GCMOE_CHECK_ARG(in.image_mask.empty() || in.bias_vl.size() == e_count,
                  "router: an image mask needs bias_vl of {} values, got {}", e_count,
                  in.bias_vl.size());
  GCMOE_CHECK_ARG(std::isfinite(params.gate_temperature) && params.gate_temperature > 0.0f,
                  "router: gate temperature {} must be positive", params.gate_temperature);
  bool const hashed = !in.hash_table.empty();
  std::size_t vocab = 0;
  if (hashed) {
    GCMOE_CHECK_ARG(in.hash_table.size() % k == 0, "router: hash table of {} ids for top-{}",
                    in.hash_table.size(), k);
    GCMOE_CHECK_ARG(in.token_ids.size() == t_count, "router: {} token ids for {} tokens",
                    in.token_ids.size(), t_count);
    vocab = in.hash_table.size() / k;
  }

  RouterRefResult out;
  out.topk_ids.resize(t_count * k);
  out.topk_weights.resize(t_count * k);
  out.selection.resize(t_count * e_count);
  std::vector<float> scores(e_count);
  std::vector<std::int32_t> order(e_count);
  for (std::size_t t = 0; t < t_count; ++t) {
    float* sel = out.selection.data() + t * e_count;
    bool const image_token = !in.image_mask.empty() && in.image_mask[t] != 0;
    std::span<float const> const bias = image_token ? in.bias_vl : in.bias;
    for (std::size_t e = 0; e < e_count; ++e) {
      double acc = 0.0;
      for (std::size_t i = 0; i < h; ++i) {
        acc +=
            static_cast<double>(in.x[t * h + i]) * static_cast<double>(in.gate_weight[e * h + i]);
      }
      // fp32 logit, then (V4.1) the fp32 division by gate_temp as transformers does it (exact
      // for the release's gate_temp 1.0).
      float const logit = static_cast<float>(acc) / params.gate_temperature;
      scores[e] = router_score(params.score, logit);
      sel[e] = bias.empty() ? scores[e] : scores[e] + bias[e];
    }
    std::int32_t* ids = out.topk_ids.data() + t * k;
    if (hashed) {
      std::int32_t const token = in.token_ids[t];
      GCMOE_CHECK_ARG(token >= 0 && static_cast<std::size_t>(token) < vocab,
                      "router: token id {} outside the hash table's {} rows", token, vocab);
      for (std::size_t j = 0; j < k; ++j) {
        ids[j] = in.hash_table[static_cast<std::size_t>(token) * k + j];
        GCMOE_CHECK_ARG(ids[j] >= 0 && static_cast<std::size_t>(ids[j]) < e_count,
                        "router: hash table expert {} outside 0..{}", ids[j], e_count - 1);
      }
    } else {
      std::iota(order.begin(), order.end(), 0);
      std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                        [&](std::int32_t a, std::int32_t b) {
                          float const sa = sel[static_cast<std::size_t>(a)];
                          float const sb = sel[static_cast<std::size_t>(b)];
                          return sa > sb || (sa == sb && a < b);
                        });
      std::copy_n(order.begin(), k, ids);
    }
    float* w = out.topk_weights.data() + t * k;
    float sum = 0.0f;
    for (std::size_t j = 0; j < k; ++j) {
      w[j] = scores[static_cast<std::size_t>(ids[j])];
      sum += w[j];
    }
    for (std::size_t j = 0; j < k; ++j) {
      w[j] = (params.renormalize ? w[j] / (sum + params.renorm_epsilon) : w[j]) *
             params.routed_scaling;
    }
  }
  return out;
}

}  // namespace gcmoe::kernels
