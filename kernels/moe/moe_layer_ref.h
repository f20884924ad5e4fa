#pragma once
// CPU reference of one whole MoE layer per model family (model-spec.md §2): the router
// (router_ref.h), each routed expert's FFN on the tokens routed to it (expert_ffn_ref.h), the
// shared expert on every token, and the combine (moe_combine_ref.h):
//   DeepSeek-V4 / V4.1: sqrt∘softplus router x1.5, SwiGLU clamp 10 on routed and shared experts,
//                       routing weight applied before the down projection, UE8M0 1x128 FP8
//                       activations (or exact fp32); V4 hash layers route by token id.
//   GLM-5.2:            sigmoid router x2.5 (+1e-20 in the normalization), no clamp, routing
//                       weight applied in the combine, dynamic per-token-group FP8 (or exact).
// The output is bf16 hidden states (as fp32 values of bf16 numbers), shared expert unscaled.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "engine/common/status.h"
#include "engine/formats/activation_quant.h"
#include "kernels/moe/expert_ffn_ref.h"
#include "kernels/moe/router_ref.h"

namespace gcmoe::kernels {

enum class MoeFamily { kDeepseekV4, kDeepseekV41, kGlm52 };

struct MoeLayerConfig {
  std::int32_t hidden = 0;        // H
  std::int32_t intermediate = 0;  // I (moe_intermediate_size)
  std::int32_t num_experts = 0;   // E routed experts
  std::int32_t top_k = 0;
  RouterParams router;
  ExpertFfnOptions expert;  // clamp, weight placement, activation recipe (routed and shared)
};

// The family's semantics at the given sizes; `fp8_activations` picks the release's activation
// recipe, otherwise exact fp32.
MoeLayerConfig moe_layer_config(MoeFamily family, std::int32_t hidden, std::int32_t intermediate,
                                std::int32_t num_experts, std::int32_t top_k, bool fp8_activations);

struct MoeLayerWeights {
  std::span<float const> gate_weight = {};        // router [E, H]
  std::span<float const> bias = {};               // [E], or empty (V4 hash layers)
  std::span<std::int32_t const> hash_table = {};  // [vocab, k], V4 layers < num_hash_layers
  std::vector<DenseExpertWeights> experts = {};   // E routed experts, dequantized
  std::optional<DenseExpertWeights> shared = {};  // the shared expert, if the model has one
};

struct MoeLayerResult {
  std::vector<float> out;  // [T, H], bf16 values
  RouterRefResult routing;
};

// x: [T, H] fp32 (the layer's normalized input); token_ids: [T] (read by a hash layer only).
StatusOr<MoeLayerResult> moe_layer_ref(MoeLayerConfig const& config, MoeLayerWeights const& weights,
                                       std::span<float const> x,
                                       std::span<std::int32_t const> token_ids);

}  // namespace gcmoe::kernels
