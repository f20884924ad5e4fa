#pragma once
// The tensors of a GLM-5.2-FP8 checkpoint (model_type glm_moe_dsa), by the official names and
// formats of model-spec §3.4, for any parsed config: with the release's config.json this lists
// its 118,629 tensors (59,044 `weight_scale_inv`), which the tests use as a check.

#include "engine/common/status.h"
#include "engine/config/model_config.h"
#include "engine/tiny/tensor_plan.h"

namespace gcmoe::tiny {

StatusOr<TensorPlan> plan_glm_moe_dsa(config::ModelConfig const& config);

}  // namespace gcmoe::tiny
