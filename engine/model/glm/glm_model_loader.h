#pragma once
// Builds a GlmStepModel for one rank from a glm_moe_dsa checkpoint directory: checks the
// checkpoint against the weight map, loads this rank's weights (its contiguous expert slice of
// comm.world_size()) through the weight loader into host memory, dequantizes them to fp32 and
// sizes the KV cache.

#include <memory>

#include "engine/common/status.h"
#include "engine/model/step_model_factory.h"
#include "engine/runtime/communicator.h"
#include "engine/runtime/step_model.h"

namespace gcmoe::model::glm {

// Errors as load_step_model (step_model_factory.h); RESOURCE_EXHAUSTED when the KV cache does not
// fit in memory.
StatusOr<std::unique_ptr<runtime::StepModel>> load_glm_step_model(StepModelOptions const& options,
                                                                  runtime::Communicator& comm);

}  // namespace gcmoe::model::glm
