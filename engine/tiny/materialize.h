#pragma once
// Turns planned tensors into safetensors entries: draws fp32 values from the tensor's own random
// stream, then stores them as the release does (BF16 / F32 / I64, FP8 with its block-scale
// sibling, or packed MXFP4 with its e8m0 scales), through the formats library's quantizers.

#include <cstdint>
#include <vector>

#include "engine/checkpoint/safetensors_writer.h"
#include "engine/common/status.h"
#include "engine/tiny/tensor_plan.h"

namespace gcmoe::tiny {

// The fp32 values of `tensor` before storage (I64 tables: the expert ids as floats), row-major
// over its logical shape. Depends only on (seed, tensor.name, shape, init).
StatusOr<std::vector<float>> draw_values(PlannedTensor const& tensor, std::uint64_t seed);

// Adds `tensor` (and its scale sibling, if any) to `writer`.
Status add_planned_tensor(PlannedTensor const& tensor, std::uint64_t seed,
                          checkpoint::SafetensorsWriter& writer);

}  // namespace gcmoe::tiny
