#include "engine/model/weights/model_weight_spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/checkpoint/shape.h"
#include "engine/common/check.h"
#include "engine/config/parse_model_config.h"
#include "engine/model/weights/deepseek_v41_weights.h"
#include "engine/model/weights/deepseek_v4_weights.h"
#include "engine/model/weights/glm_moe_dsa_weights.h"

namespace gcmoe::model {
namespace {

// Mismatches quoted in one error; the count says how many there were in all.
constexpr std::size_t kQuotedMismatches = 5;

bool dtype_matches(checkpoint::DType const expected, checkpoint::DType const actual) {
  // MXFP4 bytes are I8 in the releases; some writers say U8 for the same bytes.
  if (expected == checkpoint::DType::kI8 && actual == checkpoint::DType::kU8) {
    return true;
  }
  return expected == actual;
}

}  // namespace

StatusOr<ModelSpec> model_weight_spec(config::ModelConfig const& config,
                                      nlohmann::json const& config_json) {
  switch (config.family) {
    case config::ModelFamily::kGlmMoeDsa:
      return glm_moe_dsa_weight_spec(config);
    case config::ModelFamily::kDeepseekV4:
      return deepseek_v4_weight_spec(config);
    case config::ModelFamily::kDeepseekV41:
      return deepseek_v41_weight_spec(config, config_json);
  }
  return internal_error("unknown model family");
}

StatusOr<ModelDescription> describe_model(std::filesystem::path const& dir) {
  std::filesystem::path const path = dir / "config.json";
  std::ifstream in(path);
  if (!in) {
    return not_found_error(fmt::format("{}: cannot open", path.string()));
  }
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json const json =
      nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  GCMOE_CHECK_ARG(json.is_object(), "{}: not a JSON object", path.string());
  GCMOE_ASSIGN_OR_RETURN(config::ModelConfig config,
                         config::parse_model_config(text.str(), path.string()));
  GCMOE_ASSIGN_OR_RETURN(ModelSpec spec, model_weight_spec(config, json));
  return ModelDescription{std::move(config), std::move(spec)};
}

Status check_spec(checkpoint::CheckpointLayout const& layout, ModelSpec const& spec,
                  bool const with_mtp) {
  std::vector<std::string> mismatches;
  std::size_t total = 0;
  for_each_tensor(spec, with_mtp, [&](TensorSpec const& expected) {
    auto const found = layout.find(expected.name);
    std::string problem;
    if (!found.ok()) {
      problem = fmt::format("missing tensor '{}' (expected {})", expected.name, describe(expected));
    } else {
      checkpoint::TensorInfo const& actual = *found->tensor;
      if (!dtype_matches(expected.dtype, actual.dtype) || actual.shape != expected.shape) {
        problem = fmt::format("tensor '{}' is {} {} in {}, expected {}", expected.name,
                              checkpoint::dtype_name(actual.dtype),
                              checkpoint::shape_string(actual.shape),
                              layout.shards()[found->shard].file, describe(expected));
      }
    }
    if (!problem.empty()) {
      ++total;
      if (mismatches.size() < kQuotedMismatches) {
        mismatches.push_back(std::move(problem));
      }
    }
  });
  if (total == 0) {
    return Status();
  }
  return invalid_argument_error(fmt::format(
      "{}: checkpoint does not match its {} config ({} mismatch{}): {}{}", layout.dir().string(),
      config::model_family_name(spec.family), total, total == 1 ? "" : "es",
      fmt::join(mismatches, "; "), total > mismatches.size() ? "; ..." : ""));
}

}  // namespace gcmoe::model
