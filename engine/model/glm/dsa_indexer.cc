#include "engine/model/glm/dsa_indexer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "engine/model/glm/linear.h"
#include "engine/model/glm/norms.h"

namespace gcmoe::model::glm {

std::vector<std::int32_t> select_top_k(std::span<float const> scores, std::int64_t const k) {
  std::vector<std::int32_t> positions(scores.size());
  std::iota(positions.begin(), positions.end(), 0);
  if (static_cast<std::int64_t>(positions.size()) <= k) {
    return positions;
  }
  // A NaN score (corrupt weights) ranks last instead of breaking the ordering.
  auto const key = [&scores](std::int32_t p) {
    float const s = scores[static_cast<std::size_t>(p)];
    return std::isnan(s) ? -std::numeric_limits<float>::infinity() : s;
  };
  auto const better = [&key](std::int32_t a, std::int32_t b) {
    float const sa = key(a);
    float const sb = key(b);
    return sa > sb || (sa == sb && a < b);
  };
  std::nth_element(positions.begin(), positions.begin() + (k - 1), positions.end(), better);
  positions.resize(static_cast<std::size_t>(k));
  std::sort(positions.begin(), positions.end());
  return positions;
}

void dsa_indexer(IndexerWeights const& weights, GlmDims const& dims, Rope const& rope,
                 std::span<float const> x, std::span<float const> q_resid, TokenBatch const& batch,
                 std::int64_t const layer, KvCache& cache, Selection& selection) {
  std::int64_t const tokens = batch.tokens();
  std::int64_t const heads = dims.index_heads;
  std::int64_t const dim = dims.index_head_dim;
  std::vector<float> q(static_cast<std::size_t>(tokens * heads * dim));
  linear(q_resid, weights.wq_b.w, dims.q_lora, heads * dim, q);
  std::vector<float> k(static_cast<std::size_t>(tokens * dim));
  linear(x, weights.wk.w, dims.hidden, dim, k);
  layer_norm(k, weights.k_norm_weight, weights.k_norm_bias, kIndexerNormEps);
  std::vector<float> w(static_cast<std::size_t>(tokens * heads));
  linear(x, weights.weights_proj.w, dims.hidden, heads, w);
  float const head_scale = 1.0f / std::sqrt(static_cast<float>(heads));
  for (float& v : w) {
    v *= head_scale;
  }

  // Every key of the batch lands in the cache before any token scores (a prefill chunk's tokens
  // read each other's keys).
  for (std::int64_t t = 0; t < tokens; ++t) {
    std::int32_t const pos = batch.positions[static_cast<std::size_t>(t)];
    rope.apply(q.data() + t * heads * dim, heads, dim, pos);
    float* key = k.data() + t * dim;
    rope.apply(key, 1, dim, pos);
    auto const table =
        batch.block_tables[static_cast<std::size_t>(batch.entry[static_cast<std::size_t>(t)])];
    std::copy_n(key, dim, cache.index_key(layer, kv_row(table, pos, cache.block_size())));
  }

  float const softmax_scale = 1.0f / std::sqrt(static_cast<float>(dim));
  selection.assign(static_cast<std::size_t>(tokens), {});
  std::vector<float> scores;
  for (std::int64_t t = 0; t < tokens; ++t) {
    std::int32_t const pos = batch.positions[static_cast<std::size_t>(t)];
    auto const table =
        batch.block_tables[static_cast<std::size_t>(batch.entry[static_cast<std::size_t>(t)])];
    if (pos + 1 <= dims.index_topk) {
      // Every causal position is selected; skip scoring.
      std::vector<std::int32_t>& all = selection[static_cast<std::size_t>(t)];
      all.resize(static_cast<std::size_t>(pos + 1));
      std::iota(all.begin(), all.end(), 0);
      continue;
    }
    scores.assign(static_cast<std::size_t>(pos + 1), 0.0f);
    float const* qt = q.data() + t * heads * dim;
    float const* wt = w.data() + t * heads;
    for (std::int32_t p = 0; p <= pos; ++p) {
      float const* key = cache.index_key(layer, kv_row(table, p, cache.block_size()));
      float s = 0.0f;
      for (std::int64_t h = 0; h < heads; ++h) {
        s += wt[h] * std::max(dot(qt + h * dim, key, dim) * softmax_scale, 0.0f);
      }
      scores[static_cast<std::size_t>(p)] = s;
    }
    selection[static_cast<std::size_t>(t)] = select_top_k(scores, dims.index_topk);
  }
}

}  // namespace gcmoe::model::glm
