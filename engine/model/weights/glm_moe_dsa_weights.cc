#include "engine/model/weights/glm_moe_dsa_weights.h"

#include <fmt/format.h>

#include <string>
#include <utility>

#include "engine/common/check.h"
#include "engine/model/weights/spec_builder.h"

namespace gcmoe::model {
namespace {

using checkpoint::DType;

Status add_attention(BlockBuilder& b, config::ModelConfig const& config,
                     config::GlmMoeDsaExtras const& glm, bool const indexer) {
  config::WeightFormat const& fp8 = config.dense_format;
  std::int64_t const hidden = config.hidden_size;
  std::int64_t const heads = config.num_attention_heads;
  TensorGroup& attn = b.block().attention;
  std::int64_t const qk_head = glm.qk_nope_head_dim + glm.qk_rope_head_dim;
  GCMOE_RETURN_IF_ERROR(b.linear(attn, "self_attn.q_a_proj", glm.q_lora_rank, hidden, fp8));
  GCMOE_RETURN_IF_ERROR(
      b.linear(attn, "self_attn.q_b_proj", heads * qk_head, glm.q_lora_rank, fp8));
  // Rows: the kv latent, then the shared rope key.
  GCMOE_RETURN_IF_ERROR(b.linear(attn, "self_attn.kv_a_proj_with_mqa",
                                 glm.kv_lora_rank + glm.qk_rope_head_dim, hidden, fp8));
  // Per head: k_nope rows, then v rows.
  GCMOE_RETURN_IF_ERROR(b.linear(attn, "self_attn.kv_b_proj",
                                 heads * (glm.qk_nope_head_dim + glm.v_head_dim), glm.kv_lora_rank,
                                 fp8));
  GCMOE_RETURN_IF_ERROR(b.linear(attn, "self_attn.o_proj", hidden, heads * glm.v_head_dim, fp8));
  b.tensor(attn, "self_attn.q_a_layernorm.weight", DType::kBf16, {glm.q_lora_rank});
  b.tensor(attn, "self_attn.kv_a_layernorm.weight", DType::kBf16, {glm.kv_lora_rank});
  if (indexer) {
    GCMOE_RETURN_IF_ERROR(b.linear(attn, "self_attn.indexer.wq_b",
                                   glm.index_n_heads * glm.index_head_dim, glm.q_lora_rank, fp8));
    GCMOE_RETURN_IF_ERROR(b.linear(attn, "self_attn.indexer.wk", glm.index_head_dim, hidden, fp8));
    // k_norm is a LayerNorm (weight and bias); weights_proj stays BF16.
    b.tensor(attn, "self_attn.indexer.k_norm.weight", DType::kBf16, {glm.index_head_dim});
    b.tensor(attn, "self_attn.indexer.k_norm.bias", DType::kBf16, {glm.index_head_dim});
    b.tensor(attn, "self_attn.indexer.weights_proj.weight", DType::kBf16,
             {glm.index_n_heads, hidden});
  }
  return Status();
}

Status add_mlp(BlockBuilder& b, config::ModelConfig const& config, std::int64_t const layer) {
  std::int64_t const hidden = config.hidden_size;
  if (!config.is_moe_layer(layer)) {
    GCMOE_ASSIGN_OR_RETURN(b.block().dense_mlp,
                           b.swiglu("mlp.", "gate_proj", "up_proj", "down_proj", hidden,
                                    config.dense_intermediate_size, config.dense_format));
    return Status();
  }
  config::MoeConfig const& moe = config.moe;
  MoeSpec spec;
  spec.prefix = b.prefix() + "mlp";
  spec.router.weight = b.plain("mlp.gate.weight", DType::kBf16, {moe.n_routed_experts, hidden});
  spec.router.bias =
      b.plain("mlp.gate.e_score_correction_bias", DType::kF32, {moe.n_routed_experts});
  spec.experts.reserve(static_cast<std::size_t>(moe.n_routed_experts));
  for (std::int64_t e = 0; e < moe.n_routed_experts; ++e) {
    GCMOE_ASSIGN_OR_RETURN(
        SwigluSpec expert,
        b.swiglu(fmt::format("mlp.experts.{}.", e), "gate_proj", "up_proj", "down_proj", hidden,
                 moe.moe_intermediate_size, config.expert_format));
    spec.experts.push_back(std::move(expert));
  }
  if (moe.n_shared_experts > 0) {
    GCMOE_ASSIGN_OR_RETURN(
        spec.shared,
        b.swiglu("mlp.shared_experts.", "gate_proj", "up_proj", "down_proj", hidden,
                 moe.moe_intermediate_size * moe.n_shared_experts, config.dense_format));
  }
  b.block().moe = std::move(spec);
  return Status();
}

}  // namespace

StatusOr<ModelSpec> glm_moe_dsa_weight_spec(config::ModelConfig const& config) {
  auto const* glm = std::get_if<config::GlmMoeDsaExtras>(&config.extras);
  GCMOE_CHECK_ARG(glm != nullptr, "glm_moe_dsa_weight_spec needs a glm_moe_dsa config, got {}",
                  config::model_family_name(config.family));
  std::int64_t const hidden = config.hidden_size;
  ModelSpec spec;
  spec.family = config.family;
  // Embedding and head stay BF16 (quantization_config.modules_to_not_convert).
  spec.embed = {"model.embed_tokens.weight", DType::kBf16, {config.vocab_size, hidden}};
  spec.final_norm = {"model.norm.weight", DType::kBf16, {hidden}};
  spec.lm_head = {"lm_head.weight", DType::kBf16, {config.vocab_size, hidden}};
  std::int64_t const total = config.num_hidden_layers + config.num_nextn_predict_layers;
  for (std::int64_t layer = 0; layer < total; ++layer) {
    bool const mtp = layer >= config.num_hidden_layers;
    BlockBuilder b(fmt::format("model.layers.{}.", layer),
                   mtp ? layer - config.num_hidden_layers : layer, ScaleNaming::kWeightScaleInv);
    b.norm("input_layernorm.weight", hidden);
    b.norm("post_attention_layernorm.weight", hidden);
    GCMOE_RETURN_IF_ERROR(add_attention(b, config, *glm, mtp || glm->indexer_full(layer)));
    GCMOE_RETURN_IF_ERROR(add_mlp(b, config, layer));
    if (mtp) {
      // Embedding and hidden-state norms, their concatenating projection and the head norm; the
      // output head itself is lm_head (shared_head.head is absent in the release).
      b.norm("enorm.weight", hidden);
      b.norm("hnorm.weight", hidden);
      b.norm("shared_head.norm.weight", hidden);
      b.tensor(b.block().extra, "eh_proj.weight", DType::kBf16, {hidden, 2 * hidden});
      spec.mtp.push_back(b.take());
    } else {
      spec.layers.push_back(b.take());
    }
  }
  return spec;
}

}  // namespace gcmoe::model
