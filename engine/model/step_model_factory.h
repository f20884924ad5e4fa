#pragma once
// Builds the StepModel of a checkpoint directory for one rank: reads config.json, picks the
// family (glm_moe_dsa first), loads this rank's weights (its expert slice of `world_size`) and
// sizes the KV cache. The step loop (engine/runtime, server/) calls only this.

#include <cstdint>
#include <filesystem>
#include <memory>

#include "engine/common/status.h"
#include "engine/runtime/communicator.h"
#include "engine/runtime/step_model.h"

namespace gcmoe::model {

enum class StepBackend { kCpu, kCuda };

struct StepModelOptions {
  std::filesystem::path model_dir;
  StepBackend backend = StepBackend::kCpu;
  std::int32_t kv_blocks = 1024;    // physical KV blocks on this rank
  std::int32_t kv_block_size = 16;  // positions per block
  std::int32_t max_batch_tokens = 2048;
};

// `comm` must outlive the model; its rank and world size choose the expert slice. Errors:
// NOT_FOUND (no checkpoint), INVALID_ARGUMENT (bad config or options), UNIMPLEMENTED (a family or
// backend not built yet), DATA_LOSS (tensors that do not match the config).
StatusOr<std::unique_ptr<runtime::StepModel>> load_step_model(StepModelOptions const& options,
                                                              runtime::Communicator& comm);

}  // namespace gcmoe::model
