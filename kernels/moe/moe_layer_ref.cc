#include "kernels/moe/moe_layer_ref.h"

#include <algorithm>

#include "engine/common/check.h"
#include "kernels/moe/moe_combine_ref.h"

namespace gcmoe::kernels {

MoeLayerConfig moe_layer_config(MoeFamily family, std::int32_t hidden, std::int32_t intermediate,
                                std::int32_t num_experts, std::int32_t top_k,
                                bool fp8_activations) {
  MoeLayerConfig c;
  c.hidden = hidden;
  c.intermediate = intermediate;
  c.num_experts = num_experts;
  c.top_k = top_k;
  switch (family) {
    case MoeFamily::kDeepseekV4:
    case MoeFamily::kDeepseekV41:
      c.router = family == MoeFamily::kDeepseekV4 ? deepseek_v4_router_params()
                                                  : deepseek_v41_router_params();
      // Same clamp on routed and shared experts (the reference builds both with swiglu_limit;
      // transformers' DeepseekV4MLP and DeepseekV4Experts clamp too).
      c.expert.swiglu_limit = 10.0f;
      // The reference's order, w2(weight * act); transformers V4 multiplies after w2 instead
      // (equal in exact math; the golden test sees the fp32 rounding difference only).
      c.expert.weight_before_down = true;
      c.expert.activation_recipe = fp8_activations ? formats::ActivationRecipe::kDeepseekUe8m0
                                                   : formats::ActivationRecipe::kExactFp32;
      break;
    case MoeFamily::kGlm52:
      c.router = glm5_router_params();
      c.expert.swiglu_limit = 0.0f;
      c.expert.weight_before_down = false;
      c.expert.activation_recipe = fp8_activations ? formats::ActivationRecipe::kGlmDynamic
                                                   : formats::ActivationRecipe::kExactFp32;
      break;
  }
  return c;
}

StatusOr<MoeLayerResult> moe_layer_ref(MoeLayerConfig const& config, MoeLayerWeights const& weights,
                                       std::span<float const> x,
                                       std::span<std::int32_t const> token_ids,
                                       std::span<std::uint8_t const> image_mask) {
  auto const h = static_cast<std::size_t>(config.hidden);
  GCMOE_CHECK_ARG(h > 0 && x.size() % h == 0, "moe layer: x has {} floats, not rows of {}",
                  x.size(), h);
  auto const tokens = static_cast<std::int32_t>(x.size() / h);
  GCMOE_CHECK_ARG(static_cast<std::int32_t>(weights.experts.size()) == config.num_experts,
                  "moe layer: {} expert weight sets for {} experts", weights.experts.size(),
                  config.num_experts);
  for (DenseExpertWeights const& e : weights.experts) {
    GCMOE_CHECK_ARG(e.hidden == config.hidden && e.intermediate == config.intermediate,
                    "moe layer: an expert is {}x{}, the layer {}x{}", e.hidden, e.intermediate,
                    config.hidden, config.intermediate);
  }
  RouterShape const shape{.num_tokens = tokens,
                          .hidden = config.hidden,
                          .num_experts = config.num_experts,
                          .top_k = config.top_k};
  MoeLayerResult result;
  GCMOE_ASSIGN_OR_RETURN(result.routing, router_ref({.x = x,
                                                     .gate_weight = weights.gate_weight,
                                                     .bias = weights.bias,
                                                     .token_ids = token_ids,
                                                     .hash_table = weights.hash_table,
                                                     .bias_vl = weights.bias_vl,
                                                     .image_mask = image_mask},
                                                    shape, config.router));
  auto const k = static_cast<std::size_t>(config.top_k);
  std::size_t const slots_count = static_cast<std::size_t>(tokens) * k;

  // Each routed expert runs once on the rows routed to it, in flat slot order.
  std::vector<float> slots(slots_count * h);
  std::vector<float> rows;
  std::vector<float> row_weights;
  std::vector<float> y;
  std::vector<std::size_t> slot_of_row;
  for (std::int32_t e = 0; e < config.num_experts; ++e) {
    slot_of_row.clear();
    for (std::size_t s = 0; s < slots_count; ++s) {
      if (result.routing.topk_ids[s] == e) {
        slot_of_row.push_back(s);
      }
    }
    if (slot_of_row.empty()) {
      continue;
    }
    rows.resize(slot_of_row.size() * h);
    row_weights.resize(slot_of_row.size());
    for (std::size_t r = 0; r < slot_of_row.size(); ++r) {
      std::size_t const t = slot_of_row[r] / k;
      std::copy_n(x.begin() + static_cast<std::ptrdiff_t>(t * h), h,
                  rows.begin() + static_cast<std::ptrdiff_t>(r * h));
      row_weights[r] = result.routing.topk_weights[slot_of_row[r]];
    }
    y.resize(rows.size());
    GCMOE_RETURN_IF_ERROR(expert_ffn_ref(weights.experts[static_cast<std::size_t>(e)],
                                         config.expert, rows, row_weights, y));
    for (std::size_t r = 0; r < slot_of_row.size(); ++r) {
      std::copy_n(y.begin() + static_cast<std::ptrdiff_t>(r * h), h,
                  slots.begin() + static_cast<std::ptrdiff_t>(slot_of_row[r] * h));
    }
  }

  // The shared expert sees every token, unweighted and unscaled (routed_scaling multiplies the
  // routed weights only: reference, transformers V4 and GLM blocks all add it after the sum).
  std::vector<float> shared;
  if (weights.shared.has_value()) {
    ExpertFfnOptions shared_options = config.expert;
    shared_options.weight_before_down = false;  // the shared expert is unweighted
    shared.resize(x.size());
    GCMOE_RETURN_IF_ERROR(expert_ffn_ref(*weights.shared, shared_options, x, {}, shared));
  }
  result.out.resize(x.size());
  GCMOE_RETURN_IF_ERROR(
      moe_combine_ref({.tokens = tokens, .top_k = config.top_k, .hidden = config.hidden}, slots,
                      result.routing.topk_weights, !config.expert.weight_before_down, shared,
                      result.out, config.round_output_to_bf16));
  return result;
}

}  // namespace gcmoe::kernels
