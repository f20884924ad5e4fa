#pragma once
// The tensors of a DeepSeek-V4.1-Flash checkpoint (model_type deepseek_v41), by the names and
// formats of model-spec §3.3, for any parsed config. Text model only: the vision tower
// (`vision.*`, `aligner.*`, image tokens) is not planned. Names marked [U] in the spec (Engram
// wkv and q/k weights, indexer wk / k_norm, DSpark main_norm) follow the spec's best reading.

#include <nlohmann/json.hpp>

#include "engine/common/status.h"
#include "engine/config/model_config.h"
#include "engine/tiny/tensor_plan.h"

namespace gcmoe::tiny {

// `root`: the config.json the ModelConfig came from; the Engram and DSpark table sizes it needs
// (engram_num_embeddings, engram_head_dim, dspark_markov_rank, ...) are read from its text_config.
StatusOr<TensorPlan> plan_deepseek_v41(config::ModelConfig const& config,
                                       nlohmann::json const& root);

}  // namespace gcmoe::tiny
