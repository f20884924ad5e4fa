#pragma once
// DeepSeek-V4.1-Flash (model_type deepseek_v41) tensors by official name (model-spec §3.3): the
// V4 naming with 32×32 e8m0 blocks and MXFP4 experts; every trunk layer has `ffn.gate.bias` and
// `ffn.gate.bias_vl`; compressors only on kv-source layers (no `ape`, `wgate` on ratio-2
// layers), the indexer on index sources (`wk` + `k_norm` where also a kv source); Engram tables
// and projections on engram layers; three DSpark stages `mtp.<s>.` with their own expert count,
// main_proj on stage 0 and the markov/confidence heads on the last. No hc_head.
//
// Engram and DSpark sizes are text_config fields the typed config does not carry, so the
// config.json root is read here too (engram_num_embeddings, engram_max_ngram_size,
// engram_n_heads, engram_head_dim, dspark_markov_rank).

#include <nlohmann/json.hpp>

#include "engine/common/status.h"
#include "engine/config/model_config.h"
#include "engine/model/weights/weight_spec.h"

namespace gcmoe::model {

StatusOr<ModelSpec> deepseek_v41_weight_spec(config::ModelConfig const& config,
                                             nlohmann::json const& config_json);

}  // namespace gcmoe::model
