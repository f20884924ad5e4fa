#include "engine/model/glm/glm_dims.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <variant>

#include "engine/common/check.h"

namespace gcmoe::model::glm {

std::int64_t GlmDims::full_indexer_layers() const {
  return std::count(indexer_full.begin(), indexer_full.end(), true);
}

namespace {

StatusOr<std::vector<std::uint32_t>> eos_ids(nlohmann::json const& json) {
  std::vector<std::uint32_t> ids;
  auto const it = json.find("eos_token_id");
  if (it == json.end() || it->is_null()) {
    return ids;
  }
  auto const add = [&ids](nlohmann::json const& v) -> Status {
    GCMOE_CHECK_ARG(v.is_number_integer() && v.get<std::int64_t>() >= 0,
                    "config.json: eos_token_id entry {} is not a token id", v.dump());
    ids.push_back(static_cast<std::uint32_t>(v.get<std::int64_t>()));
    return Status();
  };
  if (it->is_array()) {
    for (nlohmann::json const& v : *it) {
      GCMOE_RETURN_IF_ERROR(add(v));
    }
  } else {
    GCMOE_RETURN_IF_ERROR(add(*it));
  }
  return ids;
}

}  // namespace

StatusOr<GlmDims> glm_dims(config::ModelConfig const& config, nlohmann::json const& config_json) {
  auto const* glm = std::get_if<config::GlmMoeDsaExtras>(&config.extras);
  GCMOE_CHECK_ARG(glm != nullptr && config.family == config::ModelFamily::kGlmMoeDsa,
                  "the GLM step model needs a glm_moe_dsa config, got {}",
                  config::model_family_name(config.family));
  GlmDims d;
  d.vocab = config.vocab_size;
  d.hidden = config.hidden_size;
  d.layers = config.num_hidden_layers;
  d.first_dense = config.first_dense_layers;
  d.dense_intermediate = config.dense_intermediate_size;
  d.heads = config.num_attention_heads;
  d.q_lora = glm->q_lora_rank;
  d.kv_lora = glm->kv_lora_rank;
  d.nope = glm->qk_nope_head_dim;
  d.rope = glm->qk_rope_head_dim;
  d.v_head = glm->v_head_dim;
  d.index_heads = glm->index_n_heads;
  d.index_head_dim = glm->index_head_dim;
  d.index_topk = glm->index_topk;
  d.experts = config.moe.n_routed_experts;
  d.top_k = config.moe.num_experts_per_tok;
  d.moe_intermediate = config.moe.moe_intermediate_size;
  d.shared_intermediate = config.moe.moe_intermediate_size * config.moe.n_shared_experts;
  d.norm_topk_prob = config.moe.norm_topk_prob;
  d.routed_scaling = static_cast<float>(config.moe.routed_scaling_factor);
  d.rms_eps = static_cast<float>(config.rms_norm_eps);
  d.rope_theta = glm->rope_theta;
  for (std::int64_t layer = 0; layer < d.layers; ++layer) {
    d.indexer_full.push_back(glm->indexer_full(layer));
  }

  GCMOE_CHECK_ARG(config.moe.scoring_func == config::ScoringFunc::kSigmoid,
                  "glm_moe_dsa: scoring_func {} is not supported (sigmoid)",
                  config::scoring_func_name(config.moe.scoring_func));
  GCMOE_CHECK_ARG(config.moe.n_group == 1 || config.moe.topk_group == config.moe.n_group,
                  "glm_moe_dsa: group-limited routing (n_group {}, topk_group {}) is not supported",
                  config.moe.n_group, config.moe.topk_group);
  GCMOE_CHECK_ARG(d.rope % 2 == 0 && d.rope <= d.index_head_dim,
                  "glm_moe_dsa: qk_rope_head_dim {} must be even and at most index_head_dim {}",
                  d.rope, d.index_head_dim);
  GCMOE_CHECK_ARG(d.layers > 0 && d.indexer_full[0],
                  "glm_moe_dsa: layer 0 must run its indexer (index_skip_topk_offset {}, "
                  "index_topk_freq {} make it reuse a selection no layer made)",
                  glm->index_skip_topk_offset, glm->index_topk_freq);
  GCMOE_CHECK_ARG(d.index_topk > 0 && d.index_heads > 0,
                  "glm_moe_dsa: index_topk {} and "
                  "index_n_heads {} must be positive",
                  d.index_topk, d.index_heads);
  GCMOE_CHECK_ARG(d.first_dense == 0 || d.dense_intermediate > 0,
                  "glm_moe_dsa: {} dense layers need intermediate_size", d.first_dense);

  auto const max_pos = config_json.find("max_position_embeddings");
  GCMOE_CHECK_ARG(max_pos != config_json.end() && max_pos->is_number_integer() &&
                      max_pos->get<std::int64_t>() > 0,
                  "config.json: max_position_embeddings must be a positive integer");
  d.max_context = static_cast<std::int32_t>(std::min<std::int64_t>(
      max_pos->get<std::int64_t>(), std::numeric_limits<std::int32_t>::max()));
  GCMOE_ASSIGN_OR_RETURN(d.eos_token_ids, eos_ids(config_json));
  return d;
}

}  // namespace gcmoe::model::glm
