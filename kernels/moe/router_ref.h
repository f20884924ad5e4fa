#pragma once
// CPU reference of the MoE router, model-spec.md §2, and the contract the CUDA router
// (kernels/moe/routing.h) is tested against:
//   logits = x · Wgᵀ                       fp32 inputs; here accumulated in double, rounded to fp32
//   s      = sqrt(softplus(logits))        DeepSeek V4/V4.1 (softplus threshold 20, as torch)
//          | sigmoid(logits)               GLM-5.2
//   ids    = top-k of (s + bias)           bias (fp32, optional) for the selection only
//          | hash_table[token_id]          DeepSeek-V4 hash layers (layer < num_hash_layers)
//   w      = s[ids] / (sum of s[ids] + renorm_epsilon) * routed_scaling   (if renormalize)
// Order of the k outputs of a token: descending selection score s + bias, ties to the lower
// expert index; a hash layer keeps its table's order.

#include <cstdint>
#include <span>
#include <vector>

#include "engine/common/status.h"

namespace gcmoe::kernels {

enum class RouterScore { kSqrtSoftplus, kSigmoid };

struct RouterShape {
  std::int32_t num_tokens = 0;   // T
  std::int32_t hidden = 0;       // H
  std::int32_t num_experts = 0;  // E, 1..1024
  std::int32_t top_k = 0;        // k, 1..min(E, 32)
};

struct RouterParams {
  RouterScore score = RouterScore::kSigmoid;
  bool renormalize = true;
  float renorm_epsilon = 0.0f;  // DeepSeek reference 0; GLM-5.2 (HF) 1e-20
  float routed_scaling = 1.0f;  // applied after renormalization
};

// DeepSeek-V4-Flash / V4.1-Flash: sqrtsoftplus, normalized, x1.5.
RouterParams deepseek_v4_router_params();
// GLM-5.2: sigmoid, normalized with +1e-20, x2.5.
RouterParams glm5_router_params();

inline constexpr std::int32_t kRouterMaxExperts = 1024;
inline constexpr std::int32_t kRouterMaxTopK = 32;

Status validate_router_shape(RouterShape const& shape);

// The score of one logit, in fp32 (the formula both the reference and the kernel use).
float router_score(RouterScore score, float logit);

struct RouterRefInputs {
  std::span<float const> x = {};                  // [T, H]
  std::span<float const> gate_weight = {};        // [E, H]
  std::span<float const> bias = {};               // [E], or empty: no correction bias
  std::span<std::int32_t const> token_ids = {};   // [T], read by a hash layer only
  std::span<std::int32_t const> hash_table = {};  // [vocab, k], or empty: biased top-k
};

struct RouterRefResult {
  std::vector<std::int32_t> topk_ids;  // [T, k]
  std::vector<float> topk_weights;     // [T, k]
  std::vector<float> selection;        // [T, E] s + bias, for judging near-ties in tests
};

StatusOr<RouterRefResult> router_ref(RouterRefInputs const& inputs, RouterShape const& shape,
                                     RouterParams const& params);

}  // namespace gcmoe::kernels
