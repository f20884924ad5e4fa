#pragma once
// Entry point of the weight mapping: the ModelSpec of a parsed config (dispatch on the family),
// and its check against a checkpoint's headers.

#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/checkpoint/checkpoint_layout.h"
#include "engine/common/status.h"
#include "engine/config/model_config.h"
#include "engine/model/weights/weight_spec.h"

namespace gcmoe::model {

// `config_json` is the config.json the config was parsed from (V4.1 reads Engram and DSpark
// sizes from it).
StatusOr<ModelSpec> model_weight_spec(config::ModelConfig const& config,
                                      nlohmann::json const& config_json);

// Reads and parses `dir`/config.json, then maps it.
struct ModelDescription {
  config::ModelConfig config;
  ModelSpec spec;
};
StatusOr<ModelDescription> describe_model(std::filesystem::path const& dir);

// Every tensor of `spec` (MTP stages included when `with_mtp`) must be in `layout` with the dtype
// and shape the spec gives (I8 and U8 both accepted for MXFP4 bytes). INVALID_ARGUMENT listing
// up to the first few mismatches, each naming the tensor, the expected dtype and shape, and what
// the checkpoint holds ("missing tensor 'model.layers.3.mlp.experts.7.up_proj.weight' (expected
// F8_E4M3 [2048, 6144])").
Status check_spec(checkpoint::CheckpointLayout const& layout, ModelSpec const& spec, bool with_mtp);

}  // namespace gcmoe::model
