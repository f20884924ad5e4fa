#pragma once
// Reads a rank's loaded checkpoint tensors (a host WeightStore, weight_loader.h) as fp32: BF16 and
// F32 tensors widened exactly, FP8 e4m3 linears dequantized with their block scales
// (engine/formats/fp8_block.h: f32 `weight_scale_inv` for GLM-5.2, e8m0 `.scale` for DeepSeek).
// The CPU step computes in fp32 on these values.

#include <cstdint>
#include <vector>

#include "engine/common/status.h"
#include "engine/model/weight_loader.h"
#include "engine/model/weights/weight_spec.h"

namespace gcmoe::model::glm {

// A dequantized projection, row-major [out, in].
struct DenseLinear {
  std::vector<float> w;
  std::int64_t out = 0;
  std::int64_t in = 0;
};

class WeightReader {
 public:
  explicit WeightReader(LoadedWeights const& loaded) : loaded_(loaded) {}

  // A BF16 or F32 tensor, flattened. DATA_LOSS when the stored bytes do not match the spec.
  StatusOr<std::vector<float>> tensor(TensorSpec const& spec) const;
  // A BF16 or FP8 (block-scaled) linear; UNIMPLEMENTED for MXFP4 (the DeepSeek experts).
  StatusOr<DenseLinear> linear(LinearSpec const& spec) const;

 private:
  StatusOr<std::vector<std::byte>> bytes(TensorSpec const& spec) const;

  LoadedWeights const& loaded_;
};

}  // namespace gcmoe::model::glm
