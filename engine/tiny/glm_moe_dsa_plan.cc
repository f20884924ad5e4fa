#include "engine/tiny/glm_moe_dsa_plan.h"

#include <fmt/format.h>

#include <string>

#include "engine/common/check.h"

namespace gcmoe::tiny {
namespace {

// Norm weights: trained RMSNorm gains sit around 1.
constexpr Init kNormInit = normal_init(1.0, 0.05);
// e_score_correction_bias: the release's values span about 6.82..7.06 (model-spec §2.3).
constexpr Init kCorrectionBiasInit = uniform_init(6.82, 7.06);

Status add_attention(TensorPlan& plan, config::ModelConfig const& config,
                     config::GlmMoeDsaExtras const& glm, std::string const& p, bool indexer) {
  config::WeightFormat const& fp8 = config.dense_format;
  std::int64_t const hidden = config.hidden_size;
  std::int64_t const heads = config.num_attention_heads;
  std::int64_t const qk_head = glm.qk_nope_head_dim + glm.qk_rope_head_dim;
  GCMOE_RETURN_IF_ERROR(plan.add_linear(p + "q_a_proj", glm.q_lora_rank, hidden, fp8));
  GCMOE_RETURN_IF_ERROR(plan.add_linear(p + "q_b_proj", heads * qk_head, glm.q_lora_rank, fp8));
  // Rows: the kv latent, then the shared rope key.
  GCMOE_RETURN_IF_ERROR(plan.add_linear(p + "kv_a_proj_with_mqa",
                                        glm.kv_lora_rank + glm.qk_rope_head_dim, hidden, fp8));
  plan.add_bf16(p + "q_a_layernorm.weight", {glm.q_lora_rank}, kNormInit);
  plan.add_bf16(p + "kv_a_layernorm.weight", {glm.kv_lora_rank}, kNormInit);
  // Per head: k_nope rows, then v rows.
  GCMOE_RETURN_IF_ERROR(plan.add_linear(
      p + "kv_b_proj", heads * (glm.qk_nope_head_dim + glm.v_head_dim), glm.kv_lora_rank, fp8));
  GCMOE_RETURN_IF_ERROR(plan.add_linear(p + "o_proj", hidden, heads * glm.v_head_dim, fp8));
  if (indexer) {
    std::string const ix = p + "indexer.";
    GCMOE_RETURN_IF_ERROR(
        plan.add_linear(ix + "wq_b", glm.index_n_heads * glm.index_head_dim, glm.q_lora_rank, fp8));
    GCMOE_RETURN_IF_ERROR(plan.add_linear(ix + "wk", glm.index_head_dim, hidden, fp8));
    plan.add_bf16(ix + "k_norm.weight", {glm.index_head_dim}, kNormInit);  // LayerNorm
    plan.add_bf16(ix + "k_norm.bias", {glm.index_head_dim}, normal_init(0.0, 0.02));
    plan.add_bf16(ix + "weights_proj.weight", {glm.index_n_heads, hidden},
                  normal_init(0.0, kWeightStd));
  }
  return Status();
}

Status add_swiglu(TensorPlan& plan, std::string const& p, std::int64_t const hidden,
                  std::int64_t const inter, config::WeightFormat const& format) {
  GCMOE_RETURN_IF_ERROR(plan.add_linear(p + "gate_proj", inter, hidden, format));
  GCMOE_RETURN_IF_ERROR(plan.add_linear(p + "up_proj", inter, hidden, format));
  return plan.add_linear(p + "down_proj", hidden, inter, format);
}

Status add_mlp(TensorPlan& plan, config::ModelConfig const& config, std::string const& p,
               std::int64_t const layer) {
  std::int64_t const hidden = config.hidden_size;
  if (!config.is_moe_layer(layer)) {
    return add_swiglu(plan, p, hidden, config.dense_intermediate_size, config.dense_format);
  }
  config::MoeConfig const& moe = config.moe;
  // The router stays BF16 on disk (computed in fp32); the bias must stay F32.
  plan.add_bf16(p + "gate.weight", {moe.n_routed_experts, hidden}, normal_init(0.0, kWeightStd));
  plan.add_f32(p + "gate.e_score_correction_bias", {moe.n_routed_experts}, kCorrectionBiasInit);
  for (std::int64_t e = 0; e < moe.n_routed_experts; ++e) {
    GCMOE_RETURN_IF_ERROR(add_swiglu(plan, fmt::format("{}experts.{}.", p, e), hidden,
                                     moe.moe_intermediate_size, config.expert_format));
  }
  if (moe.n_shared_experts > 0) {
    GCMOE_RETURN_IF_ERROR(add_swiglu(plan, p + "shared_experts.", hidden,
                                     moe.moe_intermediate_size * moe.n_shared_experts,
                                     config.dense_format));
  }
  return Status();
}

}  // namespace

StatusOr<TensorPlan> plan_glm_moe_dsa(config::ModelConfig const& config) {
  auto const* glm = std::get_if<config::GlmMoeDsaExtras>(&config.extras);
  GCMOE_CHECK_ARG(glm != nullptr, "plan_glm_moe_dsa needs a glm_moe_dsa config, got {}",
                  config::model_family_name(config.family));
  std::int64_t const hidden = config.hidden_size;
  TensorPlan plan(ScaleNaming::kWeightScaleInv);
  // The embedding stays BF16 (quantization_config.modules_to_not_convert), as does the head.
  plan.add_bf16("model.embed_tokens.weight", {config.vocab_size, hidden},
                normal_init(0.0, kWeightStd));
  std::int64_t const total_layers = config.num_hidden_layers + config.num_nextn_predict_layers;
  for (std::int64_t layer = 0; layer < total_layers; ++layer) {
    std::string const p = fmt::format("model.layers.{}.", layer);
    bool const mtp = layer >= config.num_hidden_layers;
    plan.add_bf16(p + "input_layernorm.weight", {hidden}, kNormInit);
    plan.add_bf16(p + "post_attention_layernorm.weight", {hidden}, kNormInit);
    // MTP layers carry a full indexer (model-spec §3.4: 1,569 tensors in layer 78).
    GCMOE_RETURN_IF_ERROR(
        add_attention(plan, config, *glm, p + "self_attn.", mtp || glm->indexer_full(layer)));
    GCMOE_RETURN_IF_ERROR(add_mlp(plan, config, p + "mlp.", layer));
    if (mtp) {
      plan.add_bf16(p + "enorm.weight", {hidden}, kNormInit);
      plan.add_bf16(p + "hnorm.weight", {hidden}, kNormInit);
      plan.add_bf16(p + "eh_proj.weight", {hidden, 2 * hidden}, normal_init(0.0, kWeightStd));
      plan.add_bf16(p + "shared_head.norm.weight", {hidden}, kNormInit);
    }
  }
  plan.add_bf16("model.norm.weight", {hidden}, kNormInit);
  plan.add_bf16("lm_head.weight", {config.vocab_size, hidden}, normal_init(0.0, kWeightStd));
  return plan;
}

}  // namespace gcmoe::tiny
