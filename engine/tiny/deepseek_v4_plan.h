#pragma once
// The tensors of a DeepSeek-V4-Flash checkpoint (model_type deepseek_v4), by the official names
// and formats of model-spec §3.2, for any parsed config: with the release's config.json this lists
// its 69,187 tensors, which the tests use as a check.

#include "engine/common/status.h"
#include "engine/config/model_config.h"
#include "engine/tiny/tensor_plan.h"

namespace gcmoe::tiny {

StatusOr<TensorPlan> plan_deepseek_v4(config::ModelConfig const& config);

}  // namespace gcmoe::tiny
