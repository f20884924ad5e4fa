#pragma once
// CPU reference of the MoE router, model-spec.md §2, and the contract the CUDA router
// (kernels/moe/routing.h) is tested against:
//   logits = x · Wgᵀ / gate_temperature    fp32 inputs; here accumulated in double, rounded to
//                                          fp32 (gate_temperature: V4.1 `gate_temp`, 1.0)
//   s      = sqrt(softplus(logits))        DeepSeek V4/V4.1 (softplus threshold 20, as torch)
//          | sigmoid(logits)               GLM-5.2
//   ids    = top-k of (s + bias)           bias (fp32, optional) for the selection only; V4.1
//                                          image-span tokens (image_mask) use bias_vl instead
//          | hash_table[token_id]          DeepSeek-V4 hash layers (layer < num_hash_layers)
//   w      = s[ids] / (sum of s[ids] + renorm_epsilon) * routed_scaling   (if renormalize)
// Order of the k outputs of a token: descending selection score s + bias, ties to the lower
// expert index; a hash layer keeps its table's order.
// Checked against transformers' own routers by tests/unit/kernels/moe/moe_layer_golden_test.cc.

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
  // Always on for the three families. (transformers' V4.1 router alone skips it at top_k == 1;
  // the official reference normalizes at any k, and every released layer has k >= 3.)
  bool renormalize = true;
  // DeepSeek reference 0; GLM-5.2 (HF) 1e-20. transformers adds 1e-20 for DeepSeek too: the two
  // differ in the last bit only when the k scores sum below ~1.7e-13 (every selected logit below
  // about -60), and materially only when all k scores underflow to 0 (the reference's 0/0 is NaN,
  // transformers' is 0). We keep the official reference's 0.
  float renorm_epsilon = 0.0f;
  float routed_scaling = 1.0f;  // applied after renormalization
  // DeepSeek-V4.1 `gate_temp` (config key absent in the release -> 1.0): the logits are divided
  // by it before scoring (transformers DeepseekV41TopKRouter). 1.0 everywhere else.
  float gate_temperature = 1.0f;
};

// DeepSeek-V4-Flash: sqrtsoftplus, normalized, x1.5.
RouterParams deepseek_v4_router_params();
// DeepSeek-V4.1-Flash: as V4 (no hash layers) with gate_temp 1.0.
RouterParams deepseek_v41_router_params();
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
  // DeepSeek-V4.1: `ffn.gate.bias_vl` [E], the selection bias of image-span tokens, used for
  // token t when image_mask[t] != 0 (transformers `e_score_correction_bias_vl`). Both empty for
  // text-only serving and for the other families.
  std::span<float const> bias_vl = {};
  std::span<std::uint8_t const> image_mask = {};  // [T], or empty: every token is text
};

struct RouterRefResult {
  std::vector<std::int32_t> topk_ids;  // [T, k]
  std::vector<float> topk_weights;     // [T, k]
  std::vector<float> selection;        // [T, E] s + bias, for judging near-ties in tests
};

StatusOr<RouterRefResult> router_ref(RouterRefInputs const& inputs, RouterShape const& shape,
                                     RouterParams const& params);

}  // namespace gcmoe::kernels
