#pragma once
// One rank's GLM-5.2 weights as the CPU step uses them: every tensor dequantized to fp32 once at
// load, grouped per layer (replicated attention, norms, dense MLPs, router and shared expert;
// only this rank's slice of the routed experts).

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/common/status.h"
#include "engine/model/glm/glm_dims.h"
#include "engine/model/glm/weight_reader.h"
#include "engine/model/weight_loader.h"
#include "engine/model/weights/weight_spec.h"

namespace gcmoe::model::glm {

struct IndexerWeights {
  DenseLinear wq_b;          // [index_heads × index_head_dim, q_lora]
  DenseLinear wk;            // [index_head_dim, hidden]
  DenseLinear weights_proj;  // [index_heads, hidden] (BF16 on disk)
  std::vector<float> k_norm_weight;
  std::vector<float> k_norm_bias;
};

struct AttentionWeights {
  DenseLinear q_a;   // [q_lora, hidden]
  DenseLinear q_b;   // [heads × (nope | rope), q_lora]
  DenseLinear kv_a;  // [kv_lora | rope, hidden]
  DenseLinear kv_b;  // [heads × (nope | v), kv_lora]
  DenseLinear o;     // [hidden, heads × v]
  std::vector<float> q_a_norm;
  std::vector<float> kv_a_norm;
  std::optional<IndexerWeights> indexer;  // "full" layers only
};

struct SwigluWeights {
  DenseLinear gate;  // [inter, hidden]
  DenseLinear up;    // [inter, hidden]
  DenseLinear down;  // [hidden, inter]
};

struct MoeWeights {
  std::vector<float> router;                // [experts, hidden]
  std::vector<float> bias;                  // [experts] e_score_correction_bias, selection only
  std::vector<std::int32_t> local_experts;  // ascending ids this rank holds
  std::vector<SwigluWeights> experts;       // parallel to local_experts
  std::optional<SwigluWeights> shared;
};

struct LayerWeights {
  std::vector<float> input_norm;
  std::vector<float> post_attention_norm;
  AttentionWeights attention;
  std::optional<SwigluWeights> dense;  // layers < first_k_dense_replace
  std::optional<MoeWeights> moe;       // the others
};

struct GlmWeights {
  std::vector<float> embed;       // [vocab, hidden]
  std::vector<float> final_norm;  // [hidden]
  DenseLinear lm_head;            // [vocab, hidden]
  std::vector<LayerWeights> layers;
};

// DATA_LOSS / NOT_FOUND when a tensor the spec lists is missing or mis-sized in `loaded`.
StatusOr<GlmWeights> read_glm_weights(LoadedWeights const& loaded, ModelSpec const& spec,
                                      GlmDims const& dims);

}  // namespace gcmoe::model::glm
