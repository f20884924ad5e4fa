#include "engine/model/expert_layout_transform.h"

#include "engine/model/glm_fp8_expert_transform.h"

namespace gcmoe::model {

std::unique_ptr<ExpertLayoutTransform> default_expert_transform(config::ModelConfig const& config) {
  config::WeightFormat const& f = config.expert_format;
  switch (f.encoding) {
    case config::WeightEncoding::kFp8E4m3:
      // The FP8 expert GEMM takes f32 128×128 block scales (GLM-5.2-FP8, V4-Flash-Base).
      if (f.scale == config::ScaleKind::kF32 && f.block_rows == 128 && f.block_cols == 128) {
        return std::make_unique<GlmFp8ExpertTransform>();
      }
      return nullptr;
    case config::WeightEncoding::kMxfp4:  // no FP8×MXFP4 kernel layout yet: release layout
    case config::WeightEncoding::kBf16:
      return nullptr;
  }
  return nullptr;
}

}  // namespace gcmoe::model
