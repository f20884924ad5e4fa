#include "engine/config/size_estimate.h"

#include <variant>

#include "engine/common/check.h"
#include "engine/config/expert_partition.h"

namespace gcmoe::config {
namespace {

constexpr std::int64_t kBf16Bytes = 2;
constexpr std::int64_t kF32Bytes = 4;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// gate, up: [inter, hidden]; down: [hidden, inter].
std::int64_t swiglu_mlp_bytes(WeightFormat const& format, std::int64_t hidden, std::int64_t inter) {
  return 2 * weight_bytes(format, inter, hidden) + weight_bytes(format, hidden, inter);
}

// Main attention projections of one layer.
std::int64_t attention_bytes(ModelConfig const& config) {
  WeightFormat const& f = config.dense_format;
  std::int64_t const hidden = config.hidden_size;
  std::int64_t const heads = config.num_attention_heads;
  if (auto const* glm = std::get_if<GlmMoeDsaExtras>(&config.extras)) {
    std::int64_t const qk_head = glm->qk_nope_head_dim + glm->qk_rope_head_dim;
    return weight_bytes(f, glm->q_lora_rank, hidden) +
           weight_bytes(f, heads * qk_head, glm->q_lora_rank) +
           weight_bytes(f, glm->kv_lora_rank + glm->qk_rope_head_dim, hidden) +
           weight_bytes(f, heads * (glm->qk_nope_head_dim + glm->v_head_dim), glm->kv_lora_rank) +
           weight_bytes(f, hidden, heads * glm->v_head_dim) +
           (glm->q_lora_rank + glm->kv_lora_rank) * kBf16Bytes;
  }
  DeepseekV4Extras const& v4 = std::holds_alternative<DeepseekV41Extras>(config.extras)
                                   ? std::get<DeepseekV41Extras>(config.extras).v4
                                   : std::get<DeepseekV4Extras>(config.extras);
  std::int64_t const heads_dim = heads * v4.head_dim;
  std::int64_t const o_rows = v4.o_groups * v4.o_lora_rank;
  // wq_a, wq_b, wkv, wo_a (grouped low-rank output), wo_b; q/kv norms BF16, attn_sink F32.
  std::int64_t const hc = v4.hc_mult;
  std::int64_t const hc_mixers =
      2 * (((2 + hc) * hc) * (hc * hidden) + (2 + hc) * hc + 3) * kF32Bytes;
  return weight_bytes(f, v4.q_lora_rank, hidden) + weight_bytes(f, heads_dim, v4.q_lora_rank) +
         weight_bytes(f, v4.head_dim, hidden) + weight_bytes(f, o_rows, heads_dim / v4.o_groups) +
         weight_bytes(f, hidden, o_rows) + (v4.q_lora_rank + v4.head_dim) * kBf16Bytes +
         heads * kF32Bytes + hc_mixers;
}

}  // namespace

std::int64_t weight_bytes(WeightFormat const& format, std::int64_t rows, std::int64_t cols) {
  std::int64_t const scale_bytes = format.scale == ScaleKind::kF32 ? kF32Bytes : 1;
  std::int64_t const scales =
      format.scale == ScaleKind::kNone
          ? 0
          : ceil_div(rows, format.block_rows) * ceil_div(cols, format.block_cols) * scale_bytes;
  switch (format.encoding) {
    case WeightEncoding::kBf16:
      return rows * cols * kBf16Bytes + scales;
    case WeightEncoding::kFp8E4m3:
      return rows * cols + scales;
    case WeightEncoding::kMxfp4:
      return rows * ceil_div(cols, 2) + scales;
  }
  return 0;
}

StatusOr<std::int64_t> SizeEstimate::rank_bytes(std::int64_t ranks, std::int64_t rank) const {
  GCMOE_ASSIGN_OR_RETURN(ExpertRange const range, experts_of_rank(experts_per_layer, ranks, rank));
  return replicated_bytes + moe_layers * range.count() * bytes_per_expert;
}

SizeEstimate estimate_sizes(ModelConfig const& config) {
  SizeEstimate estimate;
  std::int64_t const hidden = config.hidden_size;
  MoeConfig const& moe = config.moe;
  estimate.bytes_per_expert =
      swiglu_mlp_bytes(config.expert_format, hidden, moe.moe_intermediate_size);
  estimate.experts_per_layer = moe.n_routed_experts;
  estimate.moe_layers = config.moe_layer_count();
  estimate.routed_expert_bytes =
      estimate.moe_layers * moe.n_routed_experts * estimate.bytes_per_expert;

  std::int64_t const embedding = config.vocab_size * hidden * kBf16Bytes;
  std::int64_t replicated = embedding * (config.tie_word_embeddings ? 1 : 2) + hidden * kBf16Bytes;
  std::int64_t const norms = 2 * hidden * kBf16Bytes;
  std::int64_t const router =
      moe.n_routed_experts * hidden * kBf16Bytes + moe.n_routed_experts * kF32Bytes;
  std::int64_t const shared = moe.n_shared_experts * swiglu_mlp_bytes(config.dense_format, hidden,
                                                                      moe.moe_intermediate_size);
  std::int64_t const dense_mlp =
      swiglu_mlp_bytes(config.dense_format, hidden, config.dense_intermediate_size);
  for (std::int64_t layer = 0; layer < config.num_hidden_layers; ++layer) {
    replicated += attention_bytes(config) + norms;
    replicated += config.is_moe_layer(layer) ? router + shared : dense_mlp;
  }
  estimate.replicated_bytes = replicated;
  return estimate;
}

}  // namespace gcmoe::config
