#include "engine/tiny/deepseek_v41_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engine/common/check.h"
#include "engine/config/json_fields.h"
#include "engine/tiny/deepseek_block_plan.h"

namespace gcmoe::tiny {
namespace {

// Fields of text_config that ModelConfig does not carry.
struct V41Tables {
  std::vector<std::int64_t> engram_rows;  // table rows per Engram layer
  std::int64_t engram_lookups = 0;        // rows gathered per token: (max n-gram - 1) × heads
  std::int64_t engram_head_dim = 0;
  std::int64_t markov_rank = 0;
};

StatusOr<V41Tables> read_tables(nlohmann::json const& root, config::DeepseekV41Extras const& v41) {
  GCMOE_CHECK_ARG(
      root.is_object() && root.contains("text_config") && root["text_config"].is_object(),
      "config.json: field 'text_config' is missing");
  config::JsonFields const text(root["text_config"], "config.json", "text_config");
  V41Tables tables;
  GCMOE_ASSIGN_OR_RETURN(tables.engram_rows, text.get_int_list_or_empty("engram_num_embeddings"));
  if (tables.engram_rows.size() != v41.engram_layer_ids.size()) {
    return text.field_error("engram_num_embeddings",
                            fmt::format("has {} entries for {} engram_layer_ids",
                                        tables.engram_rows.size(), v41.engram_layer_ids.size()));
  }
  if (!v41.engram_layer_ids.empty()) {
    GCMOE_ASSIGN_OR_RETURN(std::int64_t const max_ngram, text.get_int("engram_max_ngram_size"));
    GCMOE_ASSIGN_OR_RETURN(std::int64_t const heads, text.get_int("engram_n_heads"));
    GCMOE_ASSIGN_OR_RETURN(tables.engram_head_dim, text.get_int("engram_head_dim"));
    tables.engram_lookups = (max_ngram - 1) * heads;
    if (tables.engram_lookups <= 0 || tables.engram_head_dim <= 0 ||
        tables.engram_head_dim % 32 != 0) {
      return text.field_error("engram_head_dim",
                              fmt::format("= {} must be a positive multiple of 32 (with n-gram "
                                          "size {} and {} heads)",
                                          tables.engram_head_dim, max_ngram, heads));
    }
  }
  if (!v41.dspark_target_layer_ids.empty()) {
    GCMOE_ASSIGN_OR_RETURN(tables.markov_rank, text.get_int("dspark_markov_rank"));
  }
  return tables;
}

bool contains(std::vector<std::int64_t> const& ids, std::int64_t const id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// Compressor (kv sources only; no `ape`, `wgate` only for ratio 2) and the two-level indexer.
Status add_compression(TensorPlan& plan, config::ModelConfig const& config,
                       config::DeepseekV41Extras const& v41, std::string const& p,
                       std::int64_t const layer) {
  config::DeepseekV4Extras const& v4 = v41.v4;
  std::int64_t const hidden = config.hidden_size;
  bool const kv_source = contains(v41.kv_source_layer_ids, layer);
  if (kv_source) {
    std::string const c = p + "attn.compressor.";
    plan.add_bf16(c + "wkv.weight", {v4.head_dim, hidden}, normal_init(0.0, kWeightStd));
    if (v4.compress_ratios[static_cast<std::size_t>(layer)] == 2) {
      plan.add_bf16(c + "wgate.weight", {v4.head_dim, hidden}, normal_init(0.0, kWeightStd));
    }
    plan.add_bf16(c + "norm.weight", {v4.head_dim}, kDeepseekNormInit);
  }
  if (contains(v41.index_source_layer_ids, layer)) {
    std::string const ix = p + "attn.indexer.";
    GCMOE_RETURN_IF_ERROR(plan.add_linear(ix + "wq_b", v4.index_n_heads * v4.index_head_dim,
                                          v4.q_lora_rank, config.dense_format));
    plan.add_bf16(ix + "weights_proj.weight", {v4.index_n_heads, hidden},
                  normal_init(0.0, kWeightStd));
    if (kv_source) {
      // Index keys are projected from the compressor latent (head_dim wide).
      plan.add_bf16(ix + "wk.weight", {v4.index_head_dim, v4.head_dim},
                    normal_init(0.0, kWeightStd));
      plan.add_bf16(ix + "k_norm.weight", {v4.index_head_dim}, kDeepseekNormInit);
    }
  }
  return Status();
}

// Engram tables: FP8 rows with one e8m0 scale per 32 values, and the key/value projection.
Status add_engram(TensorPlan& plan, config::ModelConfig const& config, V41Tables const& tables,
                  std::int64_t const hc, std::string const& p, std::int64_t const rows) {
  std::string const e = p + "engram.";
  config::WeightFormat const row_format{config::WeightEncoding::kFp8E4m3, config::ScaleKind::kE8m0,
                                        1, 32};
  GCMOE_RETURN_IF_ERROR(plan.add_linear(e + "embed", rows, tables.engram_head_dim, row_format));
  std::int64_t const hidden = config.hidden_size;
  // hc + 1 outputs of `hidden`: a key per stream and one value.
  GCMOE_RETURN_IF_ERROR(plan.add_linear(e + "wkv", (hc + 1) * hidden,
                                        tables.engram_lookups * tables.engram_head_dim,
                                        config.dense_format));
  plan.add_bf16(e + "q_weight", {hc, hidden}, kDeepseekNormInit);
  plan.add_bf16(e + "k_weight", {hc, hidden}, kDeepseekNormInit);
  return Status();
}

Status add_block(TensorPlan& plan, config::ModelConfig const& config,
                 config::DeepseekV41Extras const& v41, std::string const& p,
                 std::int64_t const experts, bool const vision_bias) {
  std::int64_t const hidden = config.hidden_size;
  add_block_norms_and_hc(plan, p, v41.v4.hc_mult, hidden);
  GCMOE_RETURN_IF_ERROR(add_attention_core(plan, config, v41.v4, p));
  add_router_weight(plan, p, experts, hidden);
  plan.add_f32(p + "ffn.gate.bias", {experts}, normal_init(0.0, 1.0));
  if (vision_bias) {
    // Selection bias for image-span tokens; trunk layers only.
    plan.add_f32(p + "ffn.gate.bias_vl", {experts}, normal_init(0.0, 1.0));
  }
  return add_experts(plan, config, p, experts);
}

Status add_dspark_stage(TensorPlan& plan, config::ModelConfig const& config,
                        config::DeepseekV41Extras const& v41, V41Tables const& tables,
                        std::int64_t const stage) {
  std::string const p = fmt::format("mtp.{}.", stage);
  std::int64_t const hidden = config.hidden_size;
  GCMOE_RETURN_IF_ERROR(add_block(plan, config, v41, p, v41.dspark_n_routed_experts, false));
  if (stage == 0) {
    // Reads the concatenated inputs of the dspark target layers.
    std::int64_t const width =
        static_cast<std::int64_t>(v41.dspark_target_layer_ids.size()) * hidden;
    GCMOE_RETURN_IF_ERROR(plan.add_linear(p + "main_proj", hidden, width, config.dense_format));
    plan.add_bf16(p + "main_norm.weight", {width}, kDeepseekNormInit);
  }
  if (stage == config.num_nextn_predict_layers - 1) {
    plan.add_bf16(p + "norm.weight", {hidden}, kDeepseekNormInit);
    plan.add_bf16(p + "markov_head.embed.weight", {config.vocab_size, tables.markov_rank},
                  normal_init(0.0, kWeightStd));
    plan.add_bf16(p + "markov_head.head.weight", {config.vocab_size, tables.markov_rank},
                  normal_init(0.0, kWeightStd));
    plan.add_bf16(p + "confidence_head.proj.weight", {1, hidden + tables.markov_rank},
                  normal_init(0.0, kWeightStd));
  }
  return Status();
}

}  // namespace

StatusOr<TensorPlan> plan_deepseek_v41(config::ModelConfig const& config,
                                       nlohmann::json const& root) {
  auto const* v41 = std::get_if<config::DeepseekV41Extras>(&config.extras);
  GCMOE_CHECK_ARG(v41 != nullptr, "plan_deepseek_v41 needs a deepseek_v41 config, got {}",
                  config::model_family_name(config.family));
  GCMOE_CHECK_ARG(
      static_cast<std::int64_t>(v41->v4.compress_ratios.size()) >= config.num_hidden_layers,
      "compress_ratios has {} entries for {} layers", v41->v4.compress_ratios.size(),
      config.num_hidden_layers);
  GCMOE_ASSIGN_OR_RETURN(V41Tables const tables, read_tables(root, *v41));
  std::int64_t const hidden = config.hidden_size;
  TensorPlan plan(ScaleNaming::kDotScale);
  plan.add_bf16("embed.weight", {config.vocab_size, hidden}, normal_init(0.0, kWeightStd));
  for (std::int64_t layer = 0; layer < config.num_hidden_layers; ++layer) {
    std::string const p = fmt::format("layers.{}.", layer);
    GCMOE_RETURN_IF_ERROR(add_block(plan, config, *v41, p, config.moe.n_routed_experts, true));
    GCMOE_RETURN_IF_ERROR(add_compression(plan, config, *v41, p, layer));
    auto const engram =
        std::find(v41->engram_layer_ids.begin(), v41->engram_layer_ids.end(), layer);
    if (engram != v41->engram_layer_ids.end()) {
      auto const rows =
          tables.engram_rows[static_cast<std::size_t>(engram - v41->engram_layer_ids.begin())];
      GCMOE_RETURN_IF_ERROR(add_engram(plan, config, tables, v41->v4.hc_mult, p, rows));
    }
  }
  for (std::int64_t stage = 0; stage < config.num_nextn_predict_layers; ++stage) {
    GCMOE_RETURN_IF_ERROR(add_dspark_stage(plan, config, *v41, tables, stage));
  }
  // No hc_head: the final collapse reuses the last FFN's pre-mix.
  plan.add_bf16("norm.weight", {hidden}, kDeepseekNormInit);
  plan.add_bf16("head.weight", {config.vocab_size, hidden}, normal_init(0.0, kWeightStd));
  return plan;
}

}  // namespace gcmoe::tiny
