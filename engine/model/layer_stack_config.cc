#include "engine/model/layer_stack_config.h"

#include <algorithm>
#include <string>
#include <vector>

#include "engine/common/check.h"
#include "engine/config/parse_model_config.h"

namespace gcmoe::model {
namespace {

using nlohmann::json;

// Keeps the layer ids below `layers`.
void keep_ids_below(json& text, char const* key, std::int64_t const layers) {
  if (!text.contains(key) || !text[key].is_array()) {
    return;
  }
  json kept = json::array();
  for (json const& id : text[key]) {
    if (id.is_number_integer() && id.get<std::int64_t>() < layers) {
      kept.push_back(id);
    }
  }
  text[key] = kept;
}

void cut_deepseek(json& text, std::int64_t const layers) {
  text["num_hidden_layers"] = layers;
  text["num_nextn_predict_layers"] = 0;
  if (text.contains("num_hash_layers")) {
    text["num_hash_layers"] =
        std::min<std::int64_t>(text["num_hash_layers"].get<std::int64_t>(), layers);
  }
  keep_ids_below(text, "kv_source_layer_ids", layers);
  keep_ids_below(text, "index_source_layer_ids", layers);
  text["dspark_target_layer_ids"] = json::array();
  if (text.contains("engram_layer_ids")) {
    text["engram_layer_ids"] = json::array();
    text["engram_num_embeddings"] = json::array();
  }
}

void cut_glm(json& root, std::int64_t const layers) {
  std::int64_t const dense = layers >= 2 ? 1 : 0;
  root["num_hidden_layers"] = layers;
  root["num_nextn_predict_layers"] = 0;
  root["first_k_dense_replace"] = dense;
  std::vector<std::string> types(static_cast<std::size_t>(layers), "sparse");
  std::fill_n(types.begin(), dense, "dense");
  root["mlp_layer_types"] = types;
}

}  // namespace

StatusOr<json> layer_stack_config(json const& release_config, std::int64_t const layers) {
  GCMOE_CHECK_ARG(layers >= 1, "a layer stack needs at least one layer, got {}", layers);
  GCMOE_ASSIGN_OR_RETURN(config::ModelConfig const release,
                         config::parse_model_config(release_config.dump()));
  GCMOE_CHECK_ARG(layers <= release.num_hidden_layers, "{} layers requested of a {}-layer model",
                  layers, release.num_hidden_layers);
  json out = release_config;
  switch (release.family) {
    case config::ModelFamily::kGlmMoeDsa:
      cut_glm(out, layers);
      break;
    case config::ModelFamily::kDeepseekV4:
      cut_deepseek(out, layers);
      break;
    case config::ModelFamily::kDeepseekV41:
      cut_deepseek(out["text_config"], layers);
      break;
  }
  // The result must still be a valid config of the same family.
  GCMOE_RETURN_IF_ERROR(config::parse_model_config(out.dump(), "layer stack config").status());
  return out;
}

}  // namespace gcmoe::model
