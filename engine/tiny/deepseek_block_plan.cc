#include "engine/tiny/deepseek_block_plan.h"

#include <fmt/format.h>

#include "engine/common/check.h"

namespace gcmoe::tiny {
namespace {

Status add_expert(TensorPlan& plan, std::string const& p, std::int64_t const hidden,
                  std::int64_t const inter, config::WeightFormat const& format) {
  GCMOE_RETURN_IF_ERROR(plan.add_linear(p + "w1", inter, hidden, format));
  GCMOE_RETURN_IF_ERROR(plan.add_linear(p + "w2", hidden, inter, format));
  return plan.add_linear(p + "w3", inter, hidden, format);
}

}  // namespace

void add_block_norms_and_hc(TensorPlan& plan, std::string const& p, std::int64_t const hc,
                            std::int64_t const hidden) {
  plan.add_bf16(p + "attn_norm.weight", {hidden}, kDeepseekNormInit);
  plan.add_bf16(p + "ffn_norm.weight", {hidden}, kDeepseekNormInit);
  std::int64_t const mixes = (2 + hc) * hc;  // pre (hc) + post (hc) + comb (hc × hc)
  for (char const* which : {"attn", "ffn"}) {
    std::string const hp = fmt::format("{}hc_{}_", p, which);
    plan.add_f32(hp + "fn", {mixes, hc * hidden}, normal_init(0.0, kWeightStd));
    plan.add_f32(hp + "base", {mixes}, normal_init(0.0, 0.1));
    plan.add_f32(hp + "scale", {3}, uniform_init(0.5, 1.5));
  }
}

void add_hc_head(TensorPlan& plan, std::string const& p, std::int64_t const hc,
                 std::int64_t const hidden) {
  plan.add_f32(p + "hc_head_fn", {hc, hc * hidden}, normal_init(0.0, kWeightStd));
  plan.add_f32(p + "hc_head_base", {hc}, normal_init(0.0, 0.1));
  plan.add_f32(p + "hc_head_scale", {1}, uniform_init(0.5, 1.5));
}

Status add_attention_core(TensorPlan& plan, config::ModelConfig const& config,
                          config::DeepseekV4Extras const& v4, std::string const& p) {
  config::WeightFormat const& fp8 = config.dense_format;
  std::int64_t const hidden = config.hidden_size;
  std::int64_t const heads = config.num_attention_heads;
  std::string const a = p + "attn.";
  GCMOE_RETURN_IF_ERROR(plan.add_linear(a + "wq_a", v4.q_lora_rank, hidden, fp8));
  plan.add_bf16(a + "q_norm.weight", {v4.q_lora_rank}, kDeepseekNormInit);
  GCMOE_RETURN_IF_ERROR(plan.add_linear(a + "wq_b", heads * v4.head_dim, v4.q_lora_rank, fp8));
  // One K = V latent of head_dim shared by every head (MQA).
  GCMOE_RETURN_IF_ERROR(plan.add_linear(a + "wkv", v4.head_dim, hidden, fp8));
  plan.add_bf16(a + "kv_norm.weight", {v4.head_dim}, kDeepseekNormInit);
  GCMOE_RETURN_IF_ERROR(plan.add_linear(a + "wo_a", v4.o_groups * v4.o_lora_rank,
                                        heads * v4.head_dim / v4.o_groups, fp8));
  GCMOE_RETURN_IF_ERROR(plan.add_linear(a + "wo_b", hidden, v4.o_groups * v4.o_lora_rank, fp8));
  plan.add_f32(a + "attn_sink", {heads}, normal_init(0.0, 1.0));
  return Status();
}

void add_router_weight(TensorPlan& plan, std::string const& p, std::int64_t const experts,
                       std::int64_t const hidden) {
  plan.add_bf16(p + "ffn.gate.weight", {experts, hidden}, normal_init(0.0, kWeightStd));
}

Status add_experts(TensorPlan& plan, config::ModelConfig const& config, std::string const& p,
                   std::int64_t const experts) {
  std::int64_t const hidden = config.hidden_size;
  std::int64_t const inter = config.moe.moe_intermediate_size;
  for (std::int64_t e = 0; e < experts; ++e) {
    GCMOE_RETURN_IF_ERROR(add_expert(plan, fmt::format("{}ffn.experts.{}.", p, e), hidden, inter,
                                     config.expert_format));
  }
  if (config.moe.n_shared_experts > 0) {
    GCMOE_RETURN_IF_ERROR(add_expert(plan, p + "ffn.shared_experts.", hidden,
                                     inter * config.moe.n_shared_experts, config.dense_format));
  }
  return Status();
}

}  // namespace gcmoe::tiny
