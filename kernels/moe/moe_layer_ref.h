#pragma once
// CPU reference of one whole MoE layer per model family (model-spec.md §2): the router
// (router_ref.h), each routed expert's FFN on the tokens routed to it (expert_ffn_ref.h), the
// shared expert on every token, and the combine (moe_combine_ref.h):
//   DeepSeek-V4 / V4.1: sqrt∘softplus router x1.5, SwiGLU clamp 10 on routed and shared experts,
//                       routing weight applied before the down projection, UE8M0 1x128 FP8
//                       activations (or exact fp32); V4 hash layers route by token id; V4.1
//                       divides the logits by gate_temp (1.0) and selects image-span tokens
//                       with its second bias, bias_vl.
//   GLM-5.2:            sigmoid router x2.5 (+1e-20 in the normalization), no clamp, routing
//                       weight applied in the combine, dynamic per-token-group FP8 (or exact).
// The output is bf16 hidden states (as fp32 values of bf16 numbers), shared expert unscaled
// (added after the routed sum, not multiplied by routed_scaling).
// Golden check against transformers' own MoE blocks:
// tests/unit/kernels/moe/moe_layer_golden_test.cc
// (fixtures from scripts/fixtures/make_moe_goldens.py).

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
  // The layer's output dtype is bf16 (the hidden states of the releases); false keeps the fp32
  // sum, for comparing with an fp32 reference at fp32 rounding instead of bf16 rounding.
  bool round_output_to_bf16 = true;
};

// The family's semantics at the given sizes; `fp8_activations` picks the release's activation
// recipe, otherwise exact fp32.
MoeLayerConfig moe_layer_config(MoeFamily family, std::int32_t hidden, std::int32_t intermediate,
                                std::int32_t num_experts, std::int32_t top_k, bool fp8_activations);

struct MoeLayerWeights {
  std::span<float const> gate_weight = {};        // router [E, H]
  std::span<float const> bias = {};               // [E], or empty (V4 hash layers)
  std::span<float const> bias_vl = {};            // [E], V4.1 image-span tokens (RouterRefInputs)
  std::span<std::int32_t const> hash_table = {};  // [vocab, k], V4 layers < num_hash_layers
  std::vector<DenseExpertWeights> experts = {};   // E routed experts, dequantized
  std::optional<DenseExpertWeights> shared = {};  // the shared expert, if the model has one
};

struct MoeLayerResult {
  std::vector<float> out;  // [T, H], bf16 values
  RouterRefResult routing;
};

// x: [T, H] fp32 (the layer's normalized input); token_ids: [T] (read by a hash layer only);
// image_mask: [T] or empty (V4.1: nonzero marks an image-span token, routed with bias_vl).
StatusOr<MoeLayerResult> moe_layer_ref(MoeLayerConfig const& config, MoeLayerWeights const& weights,
                                       std::span<float const> x,
                                       std::span<std::int32_t const> token_ids,
                                       std::span<std::uint8_t const> image_mask = {});

}  // namespace gcmoe::kernels
