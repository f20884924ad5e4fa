#pragma once
// The DSA lightning indexer of GLM-5.2 (model-spec §4.3, transformers GlmMoeDsaIndexer), run on
// the "full" layers; "shared" layers reuse the selection of the last full layer before them.
//   q   = wq_b(q_resid) → index_heads × index_head_dim, split [rope | nope] (rope FIRST, unlike
//         the main attention), RoPE (interleaved) on the rope part
//   k   = LayerNorm(wk(x)) → index_head_dim, same split and RoPE; written to the KV cache
//   w   = weights_proj(x) · index_heads^-0.5
//   s_t = Σ_h w_h · relu(q_h·k_t · index_head_dim^-0.5)          over the causal positions t ≤ p
//   selection = every t ≤ p when p + 1 ≤ index_topk, else the index_topk highest s_t
// Ties in s_t go to the lower position (torch.topk leaves them unspecified; the golden fixture
// checks its selections have no near-ties). The reference's Hadamard rotation and FP8 scoring
// are not applied (transformers skips them too).

#include <cstdint>
#include <span>
#include <vector>

#include "engine/model/glm/glm_dims.h"
#include "engine/model/glm/glm_weights.h"
#include "engine/model/glm/kv_cache.h"
#include "engine/model/glm/rope.h"
#include "engine/model/glm/token_batch.h"

namespace gcmoe::model::glm {

// Per token row: the key positions its attention reads, ascending.
using Selection = std::vector<std::vector<std::int32_t>>;

// x: [T, hidden] (the layer's normalized input); q_resid: [T, q_lora]. Writes every token's
// indexer key into `cache` at `layer`, then fills `selection` (resized to T rows).
void dsa_indexer(IndexerWeights const& weights, GlmDims const& dims, Rope const& rope,
                 std::span<float const> x, std::span<float const> q_resid, TokenBatch const& batch,
                 std::int64_t layer, KvCache& cache, Selection& selection);

// The top `k` of `scores` (index = position) as ascending positions; all of them when there are
// at most k. Descending score, ties to the lower position.
std::vector<std::int32_t> select_top_k(std::span<float const> scores, std::int64_t k);

}  // namespace gcmoe::model::glm
