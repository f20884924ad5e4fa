#pragma once
// Weight storage formats from a config's `quantization_config` and `expert_dtype`:
//   no quantization_config            -> everything BF16
//   quant_method fp8, weight_block_size [B, B], scale_fmt ue8m0 -> FP8 e4m3 + e8m0 B×B scales
//   ... without scale_fmt             -> FP8 e4m3 + f32 `weight_scale_inv` B×B (GLM-5.2-FP8)
//   expert_dtype fp4                  -> routed experts MXFP4 (e2m1, e8m0 scale per 1×32)
//   expert_dtype fp8                  -> routed experts FP8 with f32 B×B scales (V4-Flash-Base)
//   expert_dtype absent               -> routed experts stored like the dense weights

#include <optional>

#include "engine/common/status.h"
#include "engine/config/json_fields.h"
#include "engine/config/model_config.h"

namespace gcmoe::config {

struct QuantFormats {
  WeightFormat dense;
  WeightFormat experts;
};

// `quantization`: the quantization_config object, if any. `expert_dtype_owner`: the object that
// may hold `expert_dtype` (the root for V4, quantization_config for V4.1).
StatusOr<QuantFormats> parse_quant_formats(std::optional<JsonFields> const& quantization,
                                           JsonFields const& expert_dtype_owner);

}  // namespace gcmoe::config
