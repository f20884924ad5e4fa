#pragma once
// Entry point for config.json: dispatches on `model_type` (deepseek_v4, deepseek_v41,
// glm_moe_dsa) and returns a validated ModelConfig. Every error is INVALID_ARGUMENT naming the
// file label and the field ("config.json: field 'text_config.num_experts_per_tok' = 400 exceeds
// n_routed_experts = 384").

#include <filesystem>
#include <string_view>

#include "engine/common/status.h"
#include "engine/config/model_config.h"

namespace gcmoe::config {

StatusOr<ModelConfig> parse_model_config(std::string_view json_text,
                                         std::string_view label = "config.json");

// Reads and parses the file; NOT_FOUND when it does not exist.
StatusOr<ModelConfig> load_model_config(std::filesystem::path const& path);

}  // namespace gcmoe::config
