#include "engine/model/weights/deepseek_v41_weights.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "engine/common/check.h"
#include "engine/config/json_fields.h"
#include "engine/model/weights/deepseek_block_weights.h"

namespace gcmoe::model {
namespace {

using checkpoint::DType;

// Engram rows are FP8 with one e8m0 scale per 32 values.
constexpr config::WeightFormat kEngramRowFormat{config::WeightEncoding::kFp8E4m3,
                                                config::ScaleKind::kE8m0, 1, 32};

struct V41Sizes {
  std::vector<std::int64_t> engram_rows;  // table rows per engram layer
  std::int64_t engram_lookups = 0;        // rows gathered per token: (max n-gram − 1) × heads
  std::int64_t engram_head_dim = 0;
  std::int64_t markov_rank = 0;
};

StatusOr<V41Sizes> read_sizes(nlohmann::json const& root, config::DeepseekV41Extras const& v41,
                              bool const dspark) {
  GCMOE_CHECK_ARG(root.is_object() && root.contains("text_config"),
                  "config.json: field 'text_config' is missing");
  config::JsonFields const text(root["text_config"], "config.json", "text_config");
  V41Sizes sizes;
  GCMOE_ASSIGN_OR_RETURN(sizes.engram_rows, text.get_int_list_or_empty("engram_num_embeddings"));
  GCMOE_CHECK_ARG(sizes.engram_rows.size() == v41.engram_layer_ids.size(),
                  "config.json: engram_num_embeddings has {} entries for {} engram layers",
                  sizes.engram_rows.size(), v41.engram_layer_ids.size());
  if (!v41.engram_layer_ids.empty()) {
    GCMOE_ASSIGN_OR_RETURN(std::int64_t const max_ngram, text.get_int("engram_max_ngram_size"));
    GCMOE_ASSIGN_OR_RETURN(std::int64_t const heads, text.get_int("engram_n_heads"));
    GCMOE_ASSIGN_OR_RETURN(sizes.engram_head_dim, text.get_int("engram_head_dim"));
    sizes.engram_lookups = (max_ngram - 1) * heads;
  }
  if (dspark) {
    GCMOE_ASSIGN_OR_RETURN(sizes.markov_rank, text.get_int("dspark_markov_rank"));
  }
  return sizes;
}

bool contains(std::vector<std::int64_t> const& ids, std::int64_t const id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

Status add_compression(BlockBuilder& b, config::ModelConfig const& config,
                       config::DeepseekV41Extras const& v41, std::int64_t const layer) {
  config::DeepseekV4Extras const& v4 = v41.v4;
  std::int64_t const hidden = config.hidden_size;
  TensorGroup& attn = b.block().attention;
  bool const kv_source = contains(v41.kv_source_layer_ids, layer);
  if (kv_source) {
    b.tensor(attn, "attn.compressor.wkv.weight", DType::kBf16, {v4.head_dim, hidden});
    if (v4.compress_ratios[static_cast<std::size_t>(layer)] == 2) {
      b.tensor(attn, "attn.compressor.wgate.weight", DType::kBf16, {v4.head_dim, hidden});
    }
    b.tensor(attn, "attn.compressor.norm.weight", DType::kBf16, {v4.head_dim});
  }
  if (contains(v41.index_source_layer_ids, layer)) {
    GCMOE_RETURN_IF_ERROR(b.linear(attn, "attn.indexer.wq_b", v4.index_n_heads * v4.index_head_dim,
                                   v4.q_lora_rank, config.dense_format));
    b.tensor(attn, "attn.indexer.weights_proj.weight", DType::kBf16, {v4.index_n_heads, hidden});
    if (kv_source) {
      // Index keys are projected from the compressor latent (head_dim wide).
      b.tensor(attn, "attn.indexer.wk.weight", DType::kBf16, {v4.index_head_dim, v4.head_dim});
      b.tensor(attn, "attn.indexer.k_norm.weight", DType::kBf16, {v4.index_head_dim});
    }
  }
  return Status();
}

Status add_engram(BlockBuilder& b, config::ModelConfig const& config, V41Sizes const& sizes,
                  std::int64_t const hc, std::int64_t const rows) {
  std::int64_t const hidden = config.hidden_size;
  TensorGroup& extra = b.block().extra;
  GCMOE_RETURN_IF_ERROR(
      b.linear(extra, "engram.embed", rows, sizes.engram_head_dim, kEngramRowFormat));
  // hc + 1 outputs of `hidden`: a key per stream and one value.
  GCMOE_RETURN_IF_ERROR(b.linear(extra, "engram.wkv", (hc + 1) * hidden,
                                 sizes.engram_lookups * sizes.engram_head_dim,
                                 config.dense_format));
  b.tensor(extra, "engram.q_weight", DType::kBf16, {hc, hidden});
  b.tensor(extra, "engram.k_weight", DType::kBf16, {hc, hidden});
  return Status();
}

StatusOr<BlockBuilder> block(config::ModelConfig const& config,
                             config::DeepseekV41Extras const& v41, std::string prefix,
                             std::int64_t const index, std::int64_t const experts,
                             bool const trunk) {
  BlockBuilder b(std::move(prefix), index, ScaleNaming::kDotScale);
  add_deepseek_norms_and_hc(b, v41.v4.hc_mult, config.hidden_size);
  GCMOE_RETURN_IF_ERROR(add_deepseek_attention_core(b, config, v41.v4));
  GCMOE_ASSIGN_OR_RETURN(MoeSpec moe, deepseek_moe(b, config, experts));
  moe.router.bias = b.plain("ffn.gate.bias", DType::kF32, {experts});
  if (trunk) {
    // Selection bias for image-span tokens; trunk layers only.
    moe.router.bias_vl = b.plain("ffn.gate.bias_vl", DType::kF32, {experts});
  }
  b.block().moe = std::move(moe);
  return b;
}

StatusOr<BlockSpec> dspark_stage(config::ModelConfig const& config,
                                 config::DeepseekV41Extras const& v41, V41Sizes const& sizes,
                                 std::int64_t const stage) {
  std::int64_t const hidden = config.hidden_size;
  GCMOE_ASSIGN_OR_RETURN(BlockBuilder b, block(config, v41, fmt::format("mtp.{}.", stage), stage,
                                               v41.dspark_n_routed_experts, false));
  TensorGroup& extra = b.block().extra;
  if (stage == 0) {
    // Reads the concatenated hidden states of the dspark target layers.
    std::int64_t const width =
        static_cast<std::int64_t>(v41.dspark_target_layer_ids.size()) * hidden;
    GCMOE_RETURN_IF_ERROR(b.linear(extra, "main_proj", hidden, width, config.dense_format));
    b.norm("main_norm.weight", width);
  }
  if (stage == config.num_nextn_predict_layers - 1) {
    b.norm("norm.weight", hidden);
    b.tensor(extra, "markov_head.embed.weight", DType::kBf16,
             {config.vocab_size, sizes.markov_rank});
    b.tensor(extra, "markov_head.head.weight", DType::kBf16,
             {config.vocab_size, sizes.markov_rank});
    b.tensor(extra, "confidence_head.proj.weight", DType::kBf16, {1, hidden + sizes.markov_rank});
  }
  return b.take();
}

}  // namespace

StatusOr<ModelSpec> deepseek_v41_weight_spec(config::ModelConfig const& config,
                                             nlohmann::json const& config_json) {
  auto const* v41 = std::get_if<config::DeepseekV41Extras>(&config.extras);
  GCMOE_CHECK_ARG(v41 != nullptr, "deepseek_v41_weight_spec needs a deepseek_v41 config, got {}",
                  config::model_family_name(config.family));
  GCMOE_ASSIGN_OR_RETURN(V41Sizes const sizes,
                         read_sizes(config_json, *v41, config.num_nextn_predict_layers > 0));
  std::int64_t const hidden = config.hidden_size;
  ModelSpec spec;
  spec.family = config.family;
  spec.embed = {"embed.weight", DType::kBf16, {config.vocab_size, hidden}};
  spec.final_norm = {"norm.weight", DType::kBf16, {hidden}};
  spec.lm_head = {"head.weight", DType::kBf16, {config.vocab_size, hidden}};
  for (std::int64_t layer = 0; layer < config.num_hidden_layers; ++layer) {
    GCMOE_ASSIGN_OR_RETURN(BlockBuilder b, block(config, *v41, fmt::format("layers.{}.", layer),
                                                 layer, config.moe.n_routed_experts, true));
    GCMOE_RETURN_IF_ERROR(add_compression(b, config, *v41, layer));
    auto const engram =
        std::find(v41->engram_layer_ids.begin(), v41->engram_layer_ids.end(), layer);
    if (engram != v41->engram_layer_ids.end()) {
      std::int64_t const rows =
          sizes.engram_rows[static_cast<std::size_t>(engram - v41->engram_layer_ids.begin())];
      GCMOE_RETURN_IF_ERROR(add_engram(b, config, sizes, v41->v4.hc_mult, rows));
    }
    spec.layers.push_back(b.take());
  }
  for (std::int64_t stage = 0; stage < config.num_nextn_predict_layers; ++stage) {
    GCMOE_ASSIGN_OR_RETURN(BlockSpec s, dspark_stage(config, *v41, sizes, stage));
    spec.mtp.push_back(std::move(s));
  }
  return spec;
}

}  // namespace gcmoe::model
