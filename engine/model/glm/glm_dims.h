#pragma once
// The sizes and constants of one GLM-5.2 (`glm_moe_dsa`) model that its CPU step needs, taken from
// the typed config plus the config.json fields the typed config does not carry
// (max_position_embeddings, eos_token_id), checked for what this implementation supports.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "engine/common/status.h"
#include "engine/config/model_config.h"

namespace gcmoe::model::glm {

// transformers builds q_a_layernorm / kv_a_layernorm with the RMSNorm default eps (1e-6), not
// rms_norm_eps (vLLM uses 1e-5, model-spec §4.3 [U]); the golden test follows transformers.
inline constexpr float kLatentNormEps = 1e-6f;
// The indexer's k_norm is a LayerNorm with eps 1e-6 (transformers GlmMoeDsaIndexer).
inline constexpr float kIndexerNormEps = 1e-6f;

struct GlmDims {
  std::int64_t vocab = 0;
  std::int64_t hidden = 0;
  std::int64_t layers = 0;
  std::int64_t first_dense = 0;  // layers [0, first_dense) have a dense SwiGLU MLP
  std::int64_t dense_intermediate = 0;
  std::int64_t heads = 0;
  std::int64_t q_lora = 0;
  std::int64_t kv_lora = 0;  // latent width in the KV cache
  std::int64_t nope = 0;     // qk_nope_head_dim
  std::int64_t rope = 0;     // qk_rope_head_dim: rope key width in the KV cache
  std::int64_t v_head = 0;
  std::int64_t index_heads = 0;
  std::int64_t index_head_dim = 0;
  std::int64_t index_topk = 0;
  std::vector<bool> indexer_full;  // per layer: runs its indexer, else reuses the last selection
  std::int64_t experts = 0;
  std::int64_t top_k = 0;
  std::int64_t moe_intermediate = 0;
  std::int64_t shared_intermediate = 0;  // moe_intermediate × n_shared_experts (0: none)
  bool norm_topk_prob = true;
  float routed_scaling = 1.0f;
  float rms_eps = 1e-5f;
  double rope_theta = 0.0;
  std::int32_t max_context = 0;  // max_position_embeddings
  std::vector<std::uint32_t> eos_token_ids;

  std::int64_t qk_head() const { return nope + rope; }
  std::int64_t latent_width() const { return kv_lora + rope; }  // cache floats per layer per token
  std::int64_t full_indexer_layers() const;
  bool is_moe(std::int64_t layer) const { return layer >= first_dense; }
};

// INVALID_ARGUMENT for configs this implementation cannot run: not glm_moe_dsa, group-limited
// routing (n_group > 1), a non-sigmoid score, an odd rope width or one wider than the indexer
// head, a first layer that would reuse a selection no layer made.
StatusOr<GlmDims> glm_dims(config::ModelConfig const& config, nlohmann::json const& config_json);

}  // namespace gcmoe::model::glm
