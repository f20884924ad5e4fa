#pragma once
// Tensor groups that DeepSeek-V4 and V4.1 blocks share (model-spec §3.2–3.3): hyper-connection
// mixers, the attention core, and the routed + shared experts. Prefixes end in '.', e.g.
// "layers.7." or "mtp.0.".

#include <cstdint>
#include <string>

#include "engine/common/status.h"
#include "engine/config/model_config.h"
#include "engine/tiny/tensor_plan.h"

namespace gcmoe::tiny {

// Trained RMSNorm gains sit around 1.
inline constexpr Init kDeepseekNormInit = normal_init(1.0, 0.05);

// `<p>attn_norm.weight`, `<p>ffn_norm.weight` and the hc mixers `<p>hc_{attn,ffn}_{fn,base,scale}`
// (F32 [(2 + hc) * hc, hc * hidden], [(2 + hc) * hc], [3]).
void add_block_norms_and_hc(TensorPlan& plan, std::string const& p, std::int64_t hc,
                            std::int64_t hidden);

// `<p>hc_head_{fn,base,scale}` (F32 [hc, hc * hidden], [hc], [1]): V4's final stream collapse.
void add_hc_head(TensorPlan& plan, std::string const& p, std::int64_t hc, std::int64_t hidden);

// `<p>attn.` wq_a, q_norm, wq_b, wkv, kv_norm, wo_a (o_groups × [o_lora, heads·head_dim /
// o_groups] stacked), wo_b, attn_sink: the part every layer has.
Status add_attention_core(TensorPlan& plan, config::ModelConfig const& config,
                          config::DeepseekV4Extras const& v4, std::string const& p);

// `<p>ffn.gate.weight` (BF16 [experts, hidden]); the family adds bias / tid2eid.
void add_router_weight(TensorPlan& plan, std::string const& p, std::int64_t experts,
                       std::int64_t hidden);

// `<p>ffn.experts.E.{w1,w2,w3}` in the expert format (w1 = gate, w3 = up: [inter, hidden];
// w2 = down: [hidden, inter]) and `<p>ffn.shared_experts.{w1,w2,w3}` in the dense format.
Status add_experts(TensorPlan& plan, config::ModelConfig const& config, std::string const& p,
                   std::int64_t experts);

}  // namespace gcmoe::tiny
