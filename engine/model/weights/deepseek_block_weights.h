#pragma once
// Tensor groups DeepSeek-V4 and V4.1 blocks share (model-spec §3.2–3.3): norms and
// hyper-connection mixers, the attention core, and the MoE (router weight, routed experts w1 =
// gate, w3 = up, w2 = down in the expert format, shared expert in the dense format).

#include <cstdint>

#include "engine/common/status.h"
#include "engine/config/model_config.h"
#include "engine/model/weights/spec_builder.h"

namespace gcmoe::model {

// attn_norm, ffn_norm and `hc_{attn,ffn}_{fn,base,scale}` F32 [(2 + hc)·hc, hc·hidden],
// [(2 + hc)·hc], [3] (pre + post + comb mixes per stream).
void add_deepseek_norms_and_hc(BlockBuilder& b, std::int64_t hc, std::int64_t hidden);

// `hc_head_{fn,base,scale}` F32 [hc, hc·hidden], [hc], [1] into `group` (V4's final collapse).
void add_deepseek_hc_head(BlockBuilder& b, TensorGroup& group, std::int64_t hc,
                          std::int64_t hidden);

// attn.wq_a, q_norm, wq_b, wkv (one K = V latent of head_dim), kv_norm, wo_a (o_groups stacked
// [o_lora, heads·head_dim / o_groups]), wo_b, attn_sink F32 [heads].
Status add_deepseek_attention_core(BlockBuilder& b, config::ModelConfig const& config,
                                   config::DeepseekV4Extras const& v4);

// ffn.gate.weight BF16 [experts, hidden], `experts` routed experts and the shared expert. The
// caller adds the family's bias / bias_vl / tid2eid to the returned router.
StatusOr<MoeSpec> deepseek_moe(BlockBuilder const& b, config::ModelConfig const& config,
                               std::int64_t experts);

}  // namespace gcmoe::model
