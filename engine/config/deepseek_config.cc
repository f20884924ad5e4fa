#include "engine/config/deepseek_config.h"

#include <fmt/format.h>

#include <utility>
#include <vector>

#include "engine/common/check.h"
#include "engine/config/common_fields.h"
#include "engine/config/quant_formats.h"

namespace gcmoe::config {
namespace {

StatusOr<DeepseekV4Extras> parse_v4_extras(JsonFields const& text, ModelConfig const& config) {
  DeepseekV4Extras v4;
  GCMOE_ASSIGN_OR_RETURN(v4.head_dim, text.get_int("head_dim"));
  GCMOE_ASSIGN_OR_RETURN(v4.qk_rope_head_dim, text.get_int("qk_rope_head_dim"));
  GCMOE_ASSIGN_OR_RETURN(v4.q_lora_rank, text.get_int("q_lora_rank"));
  GCMOE_ASSIGN_OR_RETURN(v4.o_lora_rank, text.get_int("o_lora_rank"));
  GCMOE_ASSIGN_OR_RETURN(v4.o_groups, text.get_int("o_groups"));
  GCMOE_ASSIGN_OR_RETURN(v4.sliding_window, text.get_int("sliding_window"));
  GCMOE_ASSIGN_OR_RETURN(v4.index_n_heads, text.get_int("index_n_heads"));
  GCMOE_ASSIGN_OR_RETURN(v4.index_head_dim, text.get_int("index_head_dim"));
  GCMOE_ASSIGN_OR_RETURN(v4.index_topk, text.get_int("index_topk"));
  GCMOE_ASSIGN_OR_RETURN(v4.hc_mult, text.get_int("hc_mult"));
  GCMOE_ASSIGN_OR_RETURN(v4.hc_sinkhorn_iters, text.get_int("hc_sinkhorn_iters"));
  GCMOE_ASSIGN_OR_RETURN(v4.hc_eps, text.get_double("hc_eps"));
  GCMOE_ASSIGN_OR_RETURN(v4.rope_theta, text.get_double("rope_theta"));
  GCMOE_ASSIGN_OR_RETURN(v4.compress_rope_theta, text.get_double("compress_rope_theta"));
  if (!text.has("compress_ratios")) {
    return text.field_error("compress_ratios", "is missing");
  }
  GCMOE_ASSIGN_OR_RETURN(v4.compress_ratios, text.get_int_list_or_empty("compress_ratios"));

  // compress_ratios has one entry per layer plus the MTP/DSpark entries (pitfall: it is longer
  // than num_hidden_layers), never fewer.
  if (static_cast<std::int64_t>(v4.compress_ratios.size()) < config.num_hidden_layers) {
    return text.field_error("compress_ratios",
                            fmt::format("has {} entries, fewer than num_hidden_layers = {}",
                                        v4.compress_ratios.size(), config.num_hidden_layers));
  }
  for (std::int64_t const ratio : v4.compress_ratios) {
    if (ratio < 0) {
      return text.field_error("compress_ratios", fmt::format("holds negative ratio {}", ratio));
    }
  }
  if (v4.head_dim <= 0 || v4.qk_rope_head_dim <= 0 || v4.qk_rope_head_dim >= v4.head_dim) {
    return text.field_error("qk_rope_head_dim",
                            fmt::format("= {} must be positive and below head_dim = {}",
                                        v4.qk_rope_head_dim, v4.head_dim));
  }
  if (v4.o_groups <= 0 || (config.num_attention_heads * v4.head_dim) % v4.o_groups != 0) {
    return text.field_error(
        "o_groups", fmt::format("= {} must divide num_attention_heads × head_dim = {}", v4.o_groups,
                                config.num_attention_heads * v4.head_dim));
  }
  if (v4.hc_mult < 1) {
    return text.field_error("hc_mult", fmt::format("= {} must be at least 1", v4.hc_mult));
  }
  if (v4.q_lora_rank <= 0 || v4.o_lora_rank <= 0) {
    return text.field_error(v4.q_lora_rank <= 0 ? "q_lora_rank" : "o_lora_rank",
                            "must be positive");
  }
  return v4;
}

// Shared by both families: the common fields, hash layers and V4 extras of the text model.
StatusOr<ModelConfig> parse_deepseek_text(JsonFields const& text, ModelFamily family,
                                          QuantFormats const& formats) {
  ModelConfig config;
  config.family = family;
  config.dense_format = formats.dense;
  config.expert_format = formats.experts;
  GCMOE_RETURN_IF_ERROR(parse_common_fields(text, config));
  GCMOE_ASSIGN_OR_RETURN(config.first_dense_layers, text.get_int_or("first_k_dense_replace", 0));
  GCMOE_ASSIGN_OR_RETURN(config.dense_intermediate_size, text.get_int_or("intermediate_size", 0));
  if (family == ModelFamily::kDeepseekV4) {
    GCMOE_ASSIGN_OR_RETURN(config.moe.num_hash_layers, text.get_int("num_hash_layers"));
  } else {
    GCMOE_ASSIGN_OR_RETURN(config.moe.num_hash_layers, text.get_int_or("num_hash_layers", 0));
  }
  GCMOE_RETURN_IF_ERROR(validate_common_fields(text, config));
  if (config.moe.num_hash_layers < 0 || config.moe.num_hash_layers > config.moe_layer_count()) {
    return text.field_error("num_hash_layers",
                            fmt::format("= {} must be in [0, MoE layers = {}]",
                                        config.moe.num_hash_layers, config.moe_layer_count()));
  }
  GCMOE_ASSIGN_OR_RETURN(config.extras, parse_v4_extras(text, config));
  return config;
}

}  // namespace

StatusOr<ModelConfig> parse_deepseek_v4(JsonFields const& root) {
  GCMOE_ASSIGN_OR_RETURN(auto const quantization, root.get_optional_object("quantization_config"));
  GCMOE_ASSIGN_OR_RETURN(QuantFormats const formats, parse_quant_formats(quantization, root));
  return parse_deepseek_text(root, ModelFamily::kDeepseekV4, formats);
}

StatusOr<ModelConfig> parse_deepseek_v41(JsonFields const& root) {
  GCMOE_ASSIGN_OR_RETURN(auto const text_config, root.get_optional_object("text_config"));
  if (!text_config) {
    return root.field_error("text_config", "is missing (deepseek_v41 nests the text model there)");
  }
  JsonFields const& text = *text_config;
  GCMOE_ASSIGN_OR_RETURN(auto const quantization, root.get_optional_object("quantization_config"));
  // V4.1 moved expert_dtype into quantization_config.
  GCMOE_ASSIGN_OR_RETURN(QuantFormats const formats,
                         parse_quant_formats(quantization, quantization ? *quantization : text));
  GCMOE_ASSIGN_OR_RETURN(ModelConfig config,
                         parse_deepseek_text(text, ModelFamily::kDeepseekV41, formats));

  DeepseekV41Extras v41;
  v41.v4 = std::get<DeepseekV4Extras>(config.extras);
  GCMOE_ASSIGN_OR_RETURN(v41.kv_source_layer_ids,
                         text.get_int_list_or_empty("kv_source_layer_ids"));
  GCMOE_ASSIGN_OR_RETURN(v41.index_source_layer_ids,
                         text.get_int_list_or_empty("index_source_layer_ids"));
  GCMOE_ASSIGN_OR_RETURN(v41.engram_layer_ids, text.get_int_list_or_empty("engram_layer_ids"));
  GCMOE_ASSIGN_OR_RETURN(v41.dspark_target_layer_ids,
                         text.get_int_list_or_empty("dspark_target_layer_ids"));
  GCMOE_ASSIGN_OR_RETURN(v41.dspark_n_routed_experts,
                         text.get_int_or("dspark_n_routed_experts", 0));
  GCMOE_ASSIGN_OR_RETURN(v41.dspark_num_experts_per_tok,
                         text.get_int_or("dspark_num_experts_per_tok", 0));
  GCMOE_ASSIGN_OR_RETURN(v41.gate_temp, text.get_double_or("gate_temp", 1.0));

  std::int64_t const layers = config.num_hidden_layers;
  GCMOE_RETURN_IF_ERROR(
      check_layer_ids(text, "kv_source_layer_ids", v41.kv_source_layer_ids, layers));
  GCMOE_RETURN_IF_ERROR(
      check_layer_ids(text, "index_source_layer_ids", v41.index_source_layer_ids, layers));
  GCMOE_RETURN_IF_ERROR(check_layer_ids(text, "engram_layer_ids", v41.engram_layer_ids, layers));
  GCMOE_ASSIGN_OR_RETURN(std::vector<std::int64_t> const engram_tables,
                         text.get_int_list_or_empty("engram_num_embeddings"));
  if (engram_tables.size() != v41.engram_layer_ids.size()) {
    return text.field_error("engram_num_embeddings",
                            fmt::format("has {} entries but engram_layer_ids has {}",
                                        engram_tables.size(), v41.engram_layer_ids.size()));
  }
  GCMOE_RETURN_IF_ERROR(
      check_layer_ids(text, "dspark_target_layer_ids", v41.dspark_target_layer_ids, layers));
  if (v41.dspark_n_routed_experts < 0 || v41.dspark_num_experts_per_tok < 0 ||
      v41.dspark_num_experts_per_tok > v41.dspark_n_routed_experts) {
    return text.field_error(
        "dspark_num_experts_per_tok",
        fmt::format("= {} exceeds dspark_n_routed_experts = {}", v41.dspark_num_experts_per_tok,
                    v41.dspark_n_routed_experts));
  }
  if (!(v41.gate_temp > 0.0)) {
    return text.field_error("gate_temp", fmt::format("= {} must be positive", v41.gate_temp));
  }
  config.extras = std::move(v41);
  return config;
}

}  // namespace gcmoe::config
