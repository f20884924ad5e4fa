#pragma once
// Writes a tiny random checkpoint in a family's exact release layout: config.json, shards
// `model-0000k-of-0000n.safetensors` and `model.safetensors.index.json`. The tensor list comes
// from parsing the config (config/parse_model_config.h) and planning it per family, so a real
// release's config.json plans the release's tensor list (the tests check the counts).

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string_view>

#include "engine/common/status.h"
#include "engine/config/model_config.h"
#include "engine/tiny/tensor_plan.h"

namespace gcmoe::tiny {

// Shards per tiny checkpoint (about: a shard closes when the next tensor would overflow it).
inline constexpr std::int64_t kTinyShards = 4;

struct TinyModelSummary {
  config::ModelFamily family = config::ModelFamily::kGlmMoeDsa;
  std::size_t tensors = 0;
  std::int64_t tensor_bytes = 0;  // sum of tensor data, as index.json's total_size
  std::int64_t shards = 0;
};

// "glm_moe_dsa" | "deepseek_v41" | "deepseek_v4" (the model_type spellings).
StatusOr<config::ModelFamily> parse_family(std::string_view name);

// Parses `config_json` and plans its tensors (no values drawn).
StatusOr<TensorPlan> plan_from_config(nlohmann::json const& config_json);

// Writes the checkpoint of `config_json` into `out_dir` (created if needed; files of the same
// names are replaced). The same (config, seed) gives byte-identical files.
StatusOr<TinyModelSummary> write_tiny_model(nlohmann::json const& config_json,
                                            std::filesystem::path const& out_dir,
                                            std::uint64_t seed);

}  // namespace gcmoe::tiny
