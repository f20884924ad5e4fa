#include "engine/tiny/make_tiny.h"

#include <fmt/format.h>

#include <fstream>
#include <set>
#include <string>

#include "engine/checkpoint/safetensors_writer.h"
#include "engine/common/check.h"
#include "engine/config/parse_model_config.h"
#include "engine/tiny/deepseek_v41_plan.h"
#include "engine/tiny/deepseek_v4_plan.h"
#include "engine/tiny/glm_moe_dsa_plan.h"
#include "engine/tiny/materialize.h"

namespace gcmoe::tiny {
namespace {

Status write_config(nlohmann::json const& config_json, std::filesystem::path const& path) {
  std::ofstream out(path, std::ios::trunc);
  out << config_json.dump(2) << '\n';
  out.close();
  if (!out) {
    return data_loss_error(fmt::format("writing {} failed", path.string()));
  }
  return Status();
}

// Shard files named by the index just written.
StatusOr<std::int64_t> count_shards(std::filesystem::path const& index_path) {
  std::ifstream in(index_path);
  nlohmann::json const index = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  GCMOE_CHECK_INTERNAL(index.is_object() && index.contains("weight_map"),
                       "{} is not a safetensors index", index_path.string());
  std::set<std::string> files;
  for (auto const& [name, file] : index["weight_map"].items()) {
    files.insert(file.get<std::string>());
  }
  return static_cast<std::int64_t>(files.size());
}

StatusOr<TensorPlan> plan_tensors(config::ModelConfig const& config,
                                  nlohmann::json const& config_json) {
  switch (config.family) {
    case config::ModelFamily::kGlmMoeDsa:
      return plan_glm_moe_dsa(config);
    case config::ModelFamily::kDeepseekV4:
      return plan_deepseek_v4(config);
    case config::ModelFamily::kDeepseekV41:
      return plan_deepseek_v41(config, config_json);
  }
  return internal_error("unknown model family");
}

}  // namespace

StatusOr<config::ModelFamily> parse_family(std::string_view const name) {
  for (config::ModelFamily const family :
       {config::ModelFamily::kGlmMoeDsa, config::ModelFamily::kDeepseekV41,
        config::ModelFamily::kDeepseekV4}) {
    if (config::model_family_name(family) == name) {
      return family;
    }
  }
  return invalid_argument_error(
      fmt::format("unknown family '{}' (glm_moe_dsa, deepseek_v41, deepseek_v4)", name));
}

StatusOr<TensorPlan> plan_from_config(nlohmann::json const& config_json) {
  GCMOE_ASSIGN_OR_RETURN(config::ModelConfig const config,
                         config::parse_model_config(config_json.dump()));
  return plan_tensors(config, config_json);
}

StatusOr<TinyModelSummary> write_tiny_model(nlohmann::json const& config_json,
                                            std::filesystem::path const& out_dir,
                                            std::uint64_t const seed) {
  GCMOE_ASSIGN_OR_RETURN(config::ModelConfig const config,
                         config::parse_model_config(config_json.dump()));
  GCMOE_ASSIGN_OR_RETURN(TensorPlan const plan, plan_tensors(config, config_json));
  checkpoint::SafetensorsWriter writer;
  for (PlannedTensor const& tensor : plan.tensors()) {
    GCMOE_RETURN_IF_ERROR(add_planned_tensor(tensor, seed, writer).with_context(tensor.name));
  }
  std::int64_t const total = writer.total_bytes();
  GCMOE_RETURN_IF_ERROR(writer.write_sharded(out_dir, (total + kTinyShards - 1) / kTinyShards));
  GCMOE_RETURN_IF_ERROR(write_config(config_json, out_dir / "config.json"));
  GCMOE_ASSIGN_OR_RETURN(std::int64_t const shards,
                         count_shards(out_dir / checkpoint::kIndexFileName));
  return TinyModelSummary{config.family, writer.tensor_count(), total, shards};
}

}  // namespace gcmoe::tiny
