#include "engine/tiny/deepseek_v4_plan.h"

#include <fmt/format.h>

#include <string>

#include "engine/common/check.h"
#include "engine/tiny/deepseek_block_plan.h"

namespace gcmoe::tiny {
namespace {

// CSA layers (ratio 4) compress overlapping windows with double-width projections.
constexpr std::int64_t kCsaRatio = 4;

// `<prefix>{wkv,wgate}.weight` BF16, `ape` F32 [ratio, c·dim], `norm.weight` [dim].
void add_compressor(TensorPlan& plan, std::string const& prefix, std::int64_t const ratio,
                    std::int64_t const dim, std::int64_t const hidden) {
  std::int64_t const width = (ratio == kCsaRatio ? 2 : 1) * dim;
  plan.add_bf16(prefix + "wkv.weight", {width, hidden}, normal_init(0.0, kWeightStd));
  plan.add_bf16(prefix + "wgate.weight", {width, hidden}, normal_init(0.0, kWeightStd));
  plan.add_f32(prefix + "ape", {ratio, width}, normal_init(0.0, kWeightStd));
  plan.add_bf16(prefix + "norm.weight", {dim}, kDeepseekNormInit);
}

// One block (trunk layer or MTP stage) with compress ratio `ratio`.
Status add_block(TensorPlan& plan, config::ModelConfig const& config,
                 config::DeepseekV4Extras const& v4, std::string const& p, std::int64_t const ratio,
                 bool const hash_routed) {
  std::int64_t const hidden = config.hidden_size;
  add_block_norms_and_hc(plan, p, v4.hc_mult, hidden);
  GCMOE_RETURN_IF_ERROR(add_attention_core(plan, config, v4, p));
  if (ratio > 0) {
    add_compressor(plan, p + "attn.compressor.", ratio, v4.head_dim, hidden);
  }
  if (ratio == kCsaRatio) {
    std::string const ix = p + "attn.indexer.";
    GCMOE_RETURN_IF_ERROR(plan.add_linear(ix + "wq_b", v4.index_n_heads * v4.index_head_dim,
                                          v4.q_lora_rank, config.dense_format));
    plan.add_bf16(ix + "weights_proj.weight", {v4.index_n_heads, hidden},
                  normal_init(0.0, kWeightStd));
    add_compressor(plan, ix + "compressor.", ratio, v4.index_head_dim, hidden);
  }
  std::int64_t const experts = config.moe.n_routed_experts;
  add_router_weight(plan, p, experts, hidden);
  if (hash_routed) {
    // Hash layers route by input token id through a frozen table; they have no bias.
    plan.add_expert_table(p + "ffn.gate.tid2eid", config.vocab_size, config.moe.num_experts_per_tok,
                          experts);
  } else {
    plan.add_f32(p + "ffn.gate.bias", {experts}, normal_init(0.0, 1.0));
  }
  return add_experts(plan, config, p, experts);
}

}  // namespace

StatusOr<TensorPlan> plan_deepseek_v4(config::ModelConfig const& config) {
  auto const* v4 = std::get_if<config::DeepseekV4Extras>(&config.extras);
  GCMOE_CHECK_ARG(v4 != nullptr && config.family == config::ModelFamily::kDeepseekV4,
                  "plan_deepseek_v4 needs a deepseek_v4 config, got {}",
                  config::model_family_name(config.family));
  std::int64_t const stages = config.num_nextn_predict_layers;
  GCMOE_CHECK_ARG(
      static_cast<std::int64_t>(v4->compress_ratios.size()) >= config.num_hidden_layers + stages,
      "compress_ratios has {} entries, want {} layers + {} MTP", v4->compress_ratios.size(),
      config.num_hidden_layers, stages);
  std::int64_t const hidden = config.hidden_size;
  TensorPlan plan(ScaleNaming::kDotScale);
  plan.add_bf16("embed.weight", {config.vocab_size, hidden}, normal_init(0.0, kWeightStd));
  for (std::int64_t layer = 0; layer < config.num_hidden_layers; ++layer) {
    GCMOE_RETURN_IF_ERROR(add_block(plan, config, *v4, fmt::format("layers.{}.", layer),
                                    v4->compress_ratios[static_cast<std::size_t>(layer)],
                                    layer < config.moe.num_hash_layers));
  }
  for (std::int64_t s = 0; s < stages; ++s) {
    std::string const p = fmt::format("mtp.{}.", s);
    std::size_t const ratio_index = static_cast<std::size_t>(config.num_hidden_layers + s);
    // The MTP block routes with a biased router; embed and head are the trunk's.
    GCMOE_RETURN_IF_ERROR(add_block(plan, config, *v4, p, v4->compress_ratios[ratio_index], false));
    GCMOE_RETURN_IF_ERROR(plan.add_linear(p + "e_proj", hidden, hidden, config.dense_format));
    GCMOE_RETURN_IF_ERROR(plan.add_linear(p + "h_proj", hidden, hidden, config.dense_format));
    plan.add_bf16(p + "enorm.weight", {hidden}, kDeepseekNormInit);
    plan.add_bf16(p + "hnorm.weight", {hidden}, kDeepseekNormInit);
    plan.add_bf16(p + "norm.weight", {hidden}, kDeepseekNormInit);
    add_hc_head(plan, p, v4->hc_mult, hidden);
  }
  plan.add_bf16("norm.weight", {hidden}, kDeepseekNormInit);
  add_hc_head(plan, "", v4->hc_mult, hidden);
  plan.add_bf16("head.weight", {config.vocab_size, hidden}, normal_init(0.0, kWeightStd));
  return plan;
}

}  // namespace gcmoe::tiny
