#pragma once
// DeepSeek-V4-Flash (model_type deepseek_v4) tensors by official name (model-spec §3.2): no
// `model.` prefix, FP8 e4m3 projections with e8m0 `.scale` blocks, MXFP4 routed experts (or FP8
// with f32 scales for V4-Flash-Base, per expert_dtype). Every layer is MoE; the first
// num_hash_layers route by token id through `ffn.gate.tid2eid` and have no bias. Compressors
// sit on layers with compress ratio > 0, the indexer on ratio-4 (CSA) layers. MTP stages are
// `mtp.<s>.` blocks with their own e/h projections, norms and hc head.

#include "engine/common/status.h"
#include "engine/config/model_config.h"
#include "engine/model/weights/weight_spec.h"

namespace gcmoe::model {

StatusOr<ModelSpec> deepseek_v4_weight_spec(config::ModelConfig const& config);

}  // namespace gcmoe::model
