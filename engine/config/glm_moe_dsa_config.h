#pragma once
// config.json of GLM-5.2 (`glm_moe_dsa`): MLA attention with the DSA indexer (IndexShare via
// index_topk_freq / index_skip_topk_offset), first_k_dense_replace dense MLP layers, sigmoid
// routing; FP8 release with f32 `weight_scale_inv` 128×128 blocks.

#include "engine/common/status.h"
#include "engine/config/json_fields.h"
#include "engine/config/model_config.h"

namespace gcmoe::config {

StatusOr<ModelConfig> parse_glm_moe_dsa(JsonFields const& root);

}  // namespace gcmoe::config
