#pragma once
// MLA attention of GLM-5.2 in its absorbed (MQA) form over the paged latent cache (model-spec
// §4.3). Per token and head h:
//   q_resid = RMSNorm(q_a_proj x)                      (kept for the indexer)
//   [q_nope | q_pe] = q_b_proj(q_resid)_h;  q_pe rotated (rope.h)
//   [ckv | k_pe] = kv_a_proj_with_mqa x; ckv = RMSNorm(ckv); k_pe rotated; cached per token
//   q_lat = W_kb,hᵀ q_nope     (kv_b_proj's k rows of head h: the nope key absorbed into q)
//   s_t = (q_lat·ckv_t + q_pe·k_pe_t) · (nope + rope)^-0.5   over the selected positions t
//   o_h = W_vb,h · Σ_t softmax(s)_t ckv_t                     (kv_b_proj's v rows of head h)
//   out = o_proj [o_0 | … | o_{heads-1}]
// which equals transformers' expanded form (k = [W_kb ckv | k_pe], v = W_vb ckv) in exact math.

#include <cstdint>
#include <span>
#include <vector>

#include "engine/model/glm/dsa_indexer.h"
#include "engine/model/glm/glm_dims.h"
#include "engine/model/glm/glm_weights.h"
#include "engine/model/glm/kv_cache.h"
#include "engine/model/glm/rope.h"
#include "engine/model/glm/token_batch.h"

namespace gcmoe::model::glm {

struct MlaQueries {
  std::vector<float> q_resid;   // [T, q_lora]
  std::vector<float> q_latent;  // [T, heads, kv_lora]
  std::vector<float> q_pe;      // [T, heads, rope]
};

// x: [T, hidden], the layer's normalized input. Writes each token's [ckv | k_pe] into `cache` at
// `layer` and returns its queries.
void mla_project(AttentionWeights const& weights, GlmDims const& dims, Rope const& rope,
                 std::span<float const> x, TokenBatch const& batch, std::int64_t layer,
                 KvCache& cache, MlaQueries& queries);

// Attends each token over its selected positions; out: [T, hidden] (overwritten).
void mla_attend(AttentionWeights const& weights, GlmDims const& dims, MlaQueries const& queries,
                Selection const& selection, TokenBatch const& batch, std::int64_t layer,
                KvCache const& cache, std::span<float> out);

}  // namespace gcmoe::model::glm
