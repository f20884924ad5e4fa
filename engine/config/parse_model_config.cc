#include "engine/config/parse_model_config.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "engine/common/check.h"
#include "engine/config/deepseek_config.h"
#include "engine/config/glm_moe_dsa_config.h"
#include "engine/config/json_fields.h"

namespace gcmoe::config {

StatusOr<ModelConfig> parse_model_config(std::string_view json_text, std::string_view label) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(json_text.begin(), json_text.end(), nullptr,
                                 /*allow_exceptions=*/false);
  } catch (nlohmann::json::exception const& e) {
    return invalid_argument_error(fmt::format("{}: {}", label, e.what()));
  }
  if (json.is_discarded() || !json.is_object()) {
    return invalid_argument_error(fmt::format("{}: not a well-formed JSON object", label));
  }
  JsonFields const root(json, std::string(label), "");
  GCMOE_ASSIGN_OR_RETURN(std::string const model_type, root.get_string("model_type"));
  if (model_type == "deepseek_v4") {
    return parse_deepseek_v4(root);
  }
  if (model_type == "deepseek_v41") {
    return parse_deepseek_v41(root);
  }
  if (model_type == "glm_moe_dsa") {
    return parse_glm_moe_dsa(root);
  }
  return root.field_error(
      "model_type",
      fmt::format("= '{}' is not supported (deepseek_v4, deepseek_v41, glm_moe_dsa)", model_type));
}

StatusOr<ModelConfig> load_model_config(std::filesystem::path const& path) {
  std::ifstream in(path);
  if (!in) {
    return not_found_error(fmt::format("cannot read {}", path.string()));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_model_config(text.str(), path.string());
}

}  // namespace gcmoe::config
