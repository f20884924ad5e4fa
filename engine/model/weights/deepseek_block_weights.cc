#include "engine/model/weights/deepseek_block_weights.h"

#include <fmt/format.h>

#include <string>
#include <utility>

#include "engine/common/check.h"

namespace gcmoe::model {

using checkpoint::DType;

void add_deepseek_norms_and_hc(BlockBuilder& b, std::int64_t const hc, std::int64_t const hidden) {
  b.norm("attn_norm.weight", hidden);
  b.norm("ffn_norm.weight", hidden);
  std::int64_t const mixes = (2 + hc) * hc;
  for (char const* which : {"attn", "ffn"}) {
    std::string const p = fmt::format("hc_{}_", which);
    b.tensor(b.block().extra, p + "fn", DType::kF32, {mixes, hc * hidden});
    b.tensor(b.block().extra, p + "base", DType::kF32, {mixes});
    b.tensor(b.block().extra, p + "scale", DType::kF32, {3});
  }
}

void add_deepseek_hc_head(BlockBuilder& b, TensorGroup& group, std::int64_t const hc,
                          std::int64_t const hidden) {
  b.tensor(group, "hc_head_fn", DType::kF32, {hc, hc * hidden});
  b.tensor(group, "hc_head_base", DType::kF32, {hc});
  b.tensor(group, "hc_head_scale", DType::kF32, {1});
}

Status add_deepseek_attention_core(BlockBuilder& b, config::ModelConfig const& config,
                                   config::DeepseekV4Extras const& v4) {
  config::WeightFormat const& fp8 = config.dense_format;
  std::int64_t const hidden = config.hidden_size;
  std::int64_t const heads = config.num_attention_heads;
  TensorGroup& attn = b.block().attention;
  GCMOE_RETURN_IF_ERROR(b.linear(attn, "attn.wq_a", v4.q_lora_rank, hidden, fp8));
  GCMOE_RETURN_IF_ERROR(b.linear(attn, "attn.wq_b", heads * v4.head_dim, v4.q_lora_rank, fp8));
  GCMOE_RETURN_IF_ERROR(b.linear(attn, "attn.wkv", v4.head_dim, hidden, fp8));
  GCMOE_RETURN_IF_ERROR(b.linear(attn, "attn.wo_a", v4.o_groups * v4.o_lora_rank,
                                 heads * v4.head_dim / v4.o_groups, fp8));
  GCMOE_RETURN_IF_ERROR(b.linear(attn, "attn.wo_b", hidden, v4.o_groups * v4.o_lora_rank, fp8));
  b.tensor(attn, "attn.q_norm.weight", DType::kBf16, {v4.q_lora_rank});
  b.tensor(attn, "attn.kv_norm.weight", DType::kBf16, {v4.head_dim});
  b.tensor(attn, "attn.attn_sink", DType::kF32, {heads});
  return Status();
}

StatusOr<MoeSpec> deepseek_moe(BlockBuilder const& b, config::ModelConfig const& config,
                               std::int64_t const experts) {
  std::int64_t const hidden = config.hidden_size;
  std::int64_t const inter = config.moe.moe_intermediate_size;
  MoeSpec moe;
  moe.prefix = b.prefix() + "ffn";
  moe.router.weight = b.plain("ffn.gate.weight", DType::kBf16, {experts, hidden});
  moe.experts.reserve(static_cast<std::size_t>(experts));
  for (std::int64_t e = 0; e < experts; ++e) {
    GCMOE_ASSIGN_OR_RETURN(SwigluSpec expert,
                           b.swiglu(fmt::format("ffn.experts.{}.", e), "w1", "w3", "w2", hidden,
                                    inter, config.expert_format));
    moe.experts.push_back(std::move(expert));
  }
  if (config.moe.n_shared_experts > 0) {
    GCMOE_ASSIGN_OR_RETURN(moe.shared,
                           b.swiglu("ffn.shared_experts.", "w1", "w3", "w2", hidden,
                                    inter * config.moe.n_shared_experts, config.dense_format));
  }
  return moe;
}

}  // namespace gcmoe::model
