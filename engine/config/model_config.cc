#include "engine/config/model_config.h"

#include <fmt/format.h>

#include <algorithm>

namespace gcmoe::config {

bool GlmMoeDsaExtras::indexer_full(std::int64_t layer) const {
  return std::max<std::int64_t>(layer - index_skip_topk_offset + 1, 0) % index_topk_freq == 0;
}

std::string_view model_family_name(ModelFamily family) {
  switch (family) {
    case ModelFamily::kDeepseekV4:
      return "deepseek_v4";
    case ModelFamily::kDeepseekV41:
      return "deepseek_v41";
    case ModelFamily::kGlmMoeDsa:
      return "glm_moe_dsa";
  }
  return "?";
}

std::string_view scoring_func_name(ScoringFunc scoring) {
  switch (scoring) {
    case ScoringFunc::kSqrtSoftplus:
      return "sqrtsoftplus";
    case ScoringFunc::kSigmoid:
      return "sigmoid";
  }
  return "?";
}

namespace {

std::string_view encoding_text(WeightEncoding encoding) {
  switch (encoding) {
    case WeightEncoding::kBf16:
      return "BF16";
    case WeightEncoding::kFp8E4m3:
      return "FP8 e4m3";
    case WeightEncoding::kMxfp4:
      return "MXFP4 (e2m1)";
  }
  return "?";
}

std::string_view scale_text(ScaleKind scale) {
  switch (scale) {
    case ScaleKind::kNone:
      return "none";
    case ScaleKind::kE8m0:
      return "e8m0";
    case ScaleKind::kF32:
      return "f32";
  }
  return "?";
}

}  // namespace

std::string describe(WeightFormat const& format) {
  if (format.scale == ScaleKind::kNone) {
    return std::string(encoding_text(format.encoding));
  }
  return fmt::format("{}, {}x{} blocks, {} scales", encoding_text(format.encoding),
                     format.block_rows, format.block_cols, scale_text(format.scale));
}

}  // namespace gcmoe::config
