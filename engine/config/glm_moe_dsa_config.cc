#include "engine/config/glm_moe_dsa_config.h"

#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

#include "engine/common/check.h"
#include "engine/config/common_fields.h"
#include "engine/config/quant_formats.h"

namespace gcmoe::config {
namespace {

StatusOr<GlmMoeDsaExtras> parse_extras(JsonFields const& root) {
  GlmMoeDsaExtras glm;
  GCMOE_ASSIGN_OR_RETURN(glm.q_lora_rank, root.get_int("q_lora_rank"));
  GCMOE_ASSIGN_OR_RETURN(glm.kv_lora_rank, root.get_int("kv_lora_rank"));
  GCMOE_ASSIGN_OR_RETURN(glm.qk_nope_head_dim, root.get_int("qk_nope_head_dim"));
  GCMOE_ASSIGN_OR_RETURN(glm.qk_rope_head_dim, root.get_int("qk_rope_head_dim"));
  GCMOE_ASSIGN_OR_RETURN(glm.v_head_dim, root.get_int("v_head_dim"));
  GCMOE_ASSIGN_OR_RETURN(glm.index_n_heads, root.get_int("index_n_heads"));
  GCMOE_ASSIGN_OR_RETURN(glm.index_head_dim, root.get_int("index_head_dim"));
  GCMOE_ASSIGN_OR_RETURN(glm.index_topk, root.get_int("index_topk"));
  // GLM-5/5.1 have no IndexShare fields: the indexer runs on every layer.
  GCMOE_ASSIGN_OR_RETURN(glm.index_topk_freq, root.get_int_or("index_topk_freq", 1));
  GCMOE_ASSIGN_OR_RETURN(glm.index_skip_topk_offset, root.get_int_or("index_skip_topk_offset", 0));
  if (glm.index_topk_freq < 1) {
    return root.field_error("index_topk_freq",
                            fmt::format("= {} must be at least 1", glm.index_topk_freq));
  }
  if (glm.index_skip_topk_offset < 0) {
    return root.field_error("index_skip_topk_offset",
                            fmt::format("= {} must not be negative", glm.index_skip_topk_offset));
  }
  // Newer configs nest rope_theta in rope_parameters; older ones keep it at the root.
  GCMOE_ASSIGN_OR_RETURN(auto const rope, root.get_optional_object("rope_parameters"));
  if (rope) {
    GCMOE_ASSIGN_OR_RETURN(glm.rope_theta, rope->get_double("rope_theta"));
  } else {
    GCMOE_ASSIGN_OR_RETURN(glm.rope_theta, root.get_double("rope_theta"));
  }
  std::pair<char const*, std::int64_t> const dims[] = {{"q_lora_rank", glm.q_lora_rank},
                                                       {"kv_lora_rank", glm.kv_lora_rank},
                                                       {"qk_nope_head_dim", glm.qk_nope_head_dim},
                                                       {"qk_rope_head_dim", glm.qk_rope_head_dim},
                                                       {"v_head_dim", glm.v_head_dim}};
  for (auto const& [key, value] : dims) {
    if (value <= 0) {
      return root.field_error(key, fmt::format("= {} must be positive", value));
    }
  }
  return glm;
}

// mlp_layer_types, when given, must agree with first_k_dense_replace.
Status check_mlp_layer_types(JsonFields const& root, ModelConfig const& config) {
  GCMOE_ASSIGN_OR_RETURN(std::vector<std::string> const types,
                         root.get_string_list_or_empty("mlp_layer_types"));
  if (types.empty()) {
    return Status();
  }
  if (static_cast<std::int64_t>(types.size()) != config.num_hidden_layers) {
    return root.field_error("mlp_layer_types",
                            fmt::format("has {} entries but num_hidden_layers = {}", types.size(),
                                        config.num_hidden_layers));
  }
  for (std::size_t layer = 0; layer < types.size(); ++layer) {
    bool const moe = config.is_moe_layer(static_cast<std::int64_t>(layer));
    if (types[layer] != (moe ? "sparse" : "dense")) {
      return root.field_error(
          "mlp_layer_types",
          fmt::format("says layer {} is '{}' but first_k_dense_replace = {} makes it {}", layer,
                      types[layer], config.first_dense_layers, moe ? "sparse" : "dense"));
    }
  }
  return Status();
}

}  // namespace

StatusOr<ModelConfig> parse_glm_moe_dsa(JsonFields const& root) {
  ModelConfig config;
  config.family = ModelFamily::kGlmMoeDsa;
  GCMOE_ASSIGN_OR_RETURN(auto const quantization, root.get_optional_object("quantization_config"));
  GCMOE_ASSIGN_OR_RETURN(QuantFormats const formats, parse_quant_formats(quantization, root));
  config.dense_format = formats.dense;
  config.expert_format = formats.experts;
  GCMOE_RETURN_IF_ERROR(parse_common_fields(root, config));
  GCMOE_ASSIGN_OR_RETURN(config.first_dense_layers, root.get_int("first_k_dense_replace"));
  GCMOE_ASSIGN_OR_RETURN(config.dense_intermediate_size, root.get_int_or("intermediate_size", 0));
  GCMOE_ASSIGN_OR_RETURN(std::int64_t const moe_layer_freq, root.get_int_or("moe_layer_freq", 1));
  if (moe_layer_freq != 1) {
    return root.field_error("moe_layer_freq",
                            fmt::format("= {} is not supported (every layer after "
                                        "first_k_dense_replace must be MoE: 1)",
                                        moe_layer_freq));
  }
  GCMOE_RETURN_IF_ERROR(validate_common_fields(root, config));
  GCMOE_RETURN_IF_ERROR(check_mlp_layer_types(root, config));
  GCMOE_ASSIGN_OR_RETURN(config.extras, parse_extras(root));
  return config;
}

}  // namespace gcmoe::config
