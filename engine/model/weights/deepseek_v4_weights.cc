#include "engine/model/weights/deepseek_v4_weights.h"

#include <fmt/format.h>

#include <string>
#include <utility>

#include "engine/common/check.h"
#include "engine/model/weights/deepseek_block_weights.h"

namespace gcmoe::model {
namespace {

using checkpoint::DType;

// CSA layers (ratio 4) compress overlapping windows: double-width projections and an indexer.
constexpr std::int64_t kCsaRatio = 4;

// `<c>{wkv,wgate}.weight` BF16 [width, hidden], `<c>ape` F32 [ratio, width], `<c>norm.weight`.
void add_compressor(BlockBuilder& b, std::string const& c, std::int64_t const ratio,
                    std::int64_t const dim, std::int64_t const hidden) {
  std::int64_t const width = (ratio == kCsaRatio ? 2 : 1) * dim;
  TensorGroup& attn = b.block().attention;
  b.tensor(attn, c + "wkv.weight", DType::kBf16, {width, hidden});
  b.tensor(attn, c + "wgate.weight", DType::kBf16, {width, hidden});
  b.tensor(attn, c + "ape", DType::kF32, {ratio, width});
  b.tensor(attn, c + "norm.weight", DType::kBf16, {dim});
}

StatusOr<BlockSpec> block(config::ModelConfig const& config, config::DeepseekV4Extras const& v4,
                          std::string prefix, std::int64_t const index, std::int64_t const ratio,
                          bool const hash_routed) {
  std::int64_t const hidden = config.hidden_size;
  BlockBuilder b(std::move(prefix), index, ScaleNaming::kDotScale);
  add_deepseek_norms_and_hc(b, v4.hc_mult, hidden);
  GCMOE_RETURN_IF_ERROR(add_deepseek_attention_core(b, config, v4));
  if (ratio > 0) {
    add_compressor(b, "attn.compressor.", ratio, v4.head_dim, hidden);
  }
  if (ratio == kCsaRatio) {
    TensorGroup& attn = b.block().attention;
    GCMOE_RETURN_IF_ERROR(b.linear(attn, "attn.indexer.wq_b", v4.index_n_heads * v4.index_head_dim,
                                   v4.q_lora_rank, config.dense_format));
    b.tensor(attn, "attn.indexer.weights_proj.weight", DType::kBf16, {v4.index_n_heads, hidden});
    add_compressor(b, "attn.indexer.compressor.", ratio, v4.index_head_dim, hidden);
  }
  GCMOE_ASSIGN_OR_RETURN(MoeSpec moe, deepseek_moe(b, config, config.moe.n_routed_experts));
  if (hash_routed) {
    // Frozen token-id -> experts table; I64 on disk (the reference declares int32).
    moe.router.tid2eid = b.plain("ffn.gate.tid2eid", DType::kI64,
                                 {config.vocab_size, config.moe.num_experts_per_tok});
  } else {
    moe.router.bias = b.plain("ffn.gate.bias", DType::kF32, {config.moe.n_routed_experts});
  }
  b.block().moe = std::move(moe);
  return b.take();
}

}  // namespace

StatusOr<ModelSpec> deepseek_v4_weight_spec(config::ModelConfig const& config) {
  auto const* v4 = std::get_if<config::DeepseekV4Extras>(&config.extras);
  GCMOE_CHECK_ARG(v4 != nullptr && config.family == config::ModelFamily::kDeepseekV4,
                  "deepseek_v4_weight_spec needs a deepseek_v4 config, got {}",
                  config::model_family_name(config.family));
  std::int64_t const stages = config.num_nextn_predict_layers;
  GCMOE_CHECK_ARG(
      static_cast<std::int64_t>(v4->compress_ratios.size()) >= config.num_hidden_layers + stages,
      "compress_ratios has {} entries, want {} layers + {} MTP", v4->compress_ratios.size(),
      config.num_hidden_layers, stages);
  std::int64_t const hidden = config.hidden_size;
  ModelSpec spec;
  spec.family = config.family;
  spec.embed = {"embed.weight", DType::kBf16, {config.vocab_size, hidden}};
  spec.final_norm = {"norm.weight", DType::kBf16, {hidden}};
  spec.lm_head = {"head.weight", DType::kBf16, {config.vocab_size, hidden}};
  BlockBuilder top("", 0, ScaleNaming::kDotScale);
  add_deepseek_hc_head(top, spec.top_extra, v4->hc_mult, hidden);
  for (std::int64_t layer = 0; layer < config.num_hidden_layers; ++layer) {
    GCMOE_ASSIGN_OR_RETURN(BlockSpec b,
                           block(config, *v4, fmt::format("layers.{}.", layer), layer,
                                 v4->compress_ratios[static_cast<std::size_t>(layer)],
                                 layer - config.first_dense_layers < config.moe.num_hash_layers));
    spec.layers.push_back(std::move(b));
  }
  for (std::int64_t s = 0; s < stages; ++s) {
    std::size_t const ratio_index = static_cast<std::size_t>(config.num_hidden_layers + s);
    // MTP routes with a biased router; embed and head are the trunk's.
    GCMOE_ASSIGN_OR_RETURN(BlockSpec stage, block(config, *v4, fmt::format("mtp.{}.", s), s,
                                                  v4->compress_ratios[ratio_index], false));
    BlockBuilder b(stage.prefix, s, ScaleNaming::kDotScale);
    b.block() = std::move(stage);
    GCMOE_RETURN_IF_ERROR(b.linear(b.block().extra, "e_proj", hidden, hidden, config.dense_format));
    GCMOE_RETURN_IF_ERROR(b.linear(b.block().extra, "h_proj", hidden, hidden, config.dense_format));
    b.norm("enorm.weight", hidden);
    b.norm("hnorm.weight", hidden);
    b.norm("norm.weight", hidden);
    add_deepseek_hc_head(b, b.block().extra, v4->hc_mult, hidden);
    spec.mtp.push_back(b.take());
  }
  return spec;
}

}  // namespace gcmoe::model
