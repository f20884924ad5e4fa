#pragma once
// config.json of DeepSeek-V4-Flash (`deepseek_v4`, flat) and DeepSeek-V4.1-Flash (`deepseek_v41`:
// the text model under `text_config`, quantization_config and expert_dtype at the root level).

#include "engine/common/status.h"
#include "engine/config/json_fields.h"
#include "engine/config/model_config.h"

namespace gcmoe::config {

StatusOr<ModelConfig> parse_deepseek_v4(JsonFields const& root);
StatusOr<ModelConfig> parse_deepseek_v41(JsonFields const& root);

}  // namespace gcmoe::config
