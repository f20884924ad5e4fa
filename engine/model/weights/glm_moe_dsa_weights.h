#pragma once
// GLM-5.2 (model_type glm_moe_dsa) tensors by official name (model-spec §3.4): `model.`-prefixed
// HF names, FP8 e4m3 projections with f32 `weight_scale_inv` 128×128 blocks, BF16 embedding,
// head, norms, router and indexer weights_proj. Layers < first_k_dense_replace have a dense
// SwiGLU MLP; the rest route over n_routed_experts with an F32 e_score_correction_bias. The
// indexer exists on IndexShare "full" layers and on the MTP layer(s), which follow the trunk as
// model.layers.<num_hidden_layers + s>.

#include "engine/common/status.h"
#include "engine/config/model_config.h"
#include "engine/model/weights/weight_spec.h"

namespace gcmoe::model {

StatusOr<ModelSpec> glm_moe_dsa_weight_spec(config::ModelConfig const& config);

}  // namespace gcmoe::model
