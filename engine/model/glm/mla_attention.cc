#include "engine/model/glm/mla_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/model/glm/linear.h"
#include "engine/model/glm/norms.h"

namespace gcmoe::model::glm {

void mla_project(AttentionWeights const& weights, GlmDims const& dims, Rope const& rope,
                 std::span<float const> x, TokenBatch const& batch, std::int64_t const layer,
                 KvCache& cache, MlaQueries& queries) {
  std::int64_t const tokens = batch.tokens();
  std::int64_t const heads = dims.heads;
  std::int64_t const qk = dims.qk_head();
  std::int64_t const kv_lora = dims.kv_lora;
  std::int64_t const latent = dims.latent_width();

  queries.q_resid.resize(static_cast<std::size_t>(tokens * dims.q_lora));
  linear(x, weights.q_a.w, dims.hidden, dims.q_lora, queries.q_resid);
  rms_norm(queries.q_resid, weights.q_a_norm, kLatentNormEps);
  std::vector<float> q(static_cast<std::size_t>(tokens * heads * qk));
  linear(queries.q_resid, weights.q_b.w, dims.q_lora, heads * qk, q);

  std::vector<float> kv(static_cast<std::size_t>(tokens * latent));
  linear(x, weights.kv_a.w, dims.hidden, latent, kv);

  queries.q_latent.assign(static_cast<std::size_t>(tokens * heads * kv_lora), 0.0f);
  queries.q_pe.resize(static_cast<std::size_t>(tokens * heads * dims.rope));
  std::int64_t const kv_b_rows = dims.nope + dims.v_head;  // per head: nope key rows, then v rows
  for (std::int64_t t = 0; t < tokens; ++t) {
    std::int32_t const pos = batch.positions[static_cast<std::size_t>(t)];
    for (std::int64_t h = 0; h < heads; ++h) {
      float const* qh = q.data() + (t * heads + h) * qk;
      float* q_lat = queries.q_latent.data() + (t * heads + h) * kv_lora;
      for (std::int64_t i = 0; i < dims.nope; ++i) {
        float const qi = qh[i];
        float const* w_row = weights.kv_b.w.data() + (h * kv_b_rows + i) * kv_lora;
        for (std::int64_t c = 0; c < kv_lora; ++c) {
          q_lat[c] += qi * w_row[c];
        }
      }
      float* q_pe = queries.q_pe.data() + (t * heads + h) * dims.rope;
      std::copy_n(qh + dims.nope, dims.rope, q_pe);
    }
    rope.apply(queries.q_pe.data() + t * heads * dims.rope, heads, dims.rope, pos);

    float* row = kv.data() + t * latent;
    rms_norm(std::span<float>(row, static_cast<std::size_t>(kv_lora)), weights.kv_a_norm,
             kLatentNormEps);
    rope.apply(row + kv_lora, 1, dims.rope, pos);
    auto const table =
        batch.block_tables[static_cast<std::size_t>(batch.entry[static_cast<std::size_t>(t)])];
    std::copy_n(row, latent, cache.latent(layer, kv_row(table, pos, cache.block_size())));
  }
}

void mla_attend(AttentionWeights const& weights, GlmDims const& dims, MlaQueries const& queries,
                Selection const& selection, TokenBatch const& batch, std::int64_t const layer,
                KvCache const& cache, std::span<float> out) {
  std::int64_t const tokens = batch.tokens();
  std::int64_t const heads = dims.heads;
  std::int64_t const kv_lora = dims.kv_lora;
  std::int64_t const kv_b_rows = dims.nope + dims.v_head;
  float const scale = 1.0f / std::sqrt(static_cast<float>(dims.qk_head()));
  std::vector<float> o(static_cast<std::size_t>(tokens * heads * dims.v_head));
  std::vector<float const*> rows;
  std::vector<float> p;
  std::vector<float> o_lat(static_cast<std::size_t>(kv_lora));
  for (std::int64_t t = 0; t < tokens; ++t) {
    auto const table =
        batch.block_tables[static_cast<std::size_t>(batch.entry[static_cast<std::size_t>(t)])];
    std::vector<std::int32_t> const& picked = selection[static_cast<std::size_t>(t)];
    rows.clear();
    for (std::int32_t const pos : picked) {
      rows.push_back(cache.latent(layer, kv_row(table, pos, cache.block_size())));
    }
    p.resize(rows.size());
    for (std::int64_t h = 0; h < heads; ++h) {
      float const* q_lat = queries.q_latent.data() + (t * heads + h) * kv_lora;
      float const* q_pe = queries.q_pe.data() + (t * heads + h) * dims.rope;
      float max_score = -std::numeric_limits<float>::infinity();
      for (std::size_t j = 0; j < rows.size(); ++j) {
        p[j] = (dot(q_lat, rows[j], kv_lora) + dot(q_pe, rows[j] + kv_lora, dims.rope)) * scale;
        max_score = std::max(max_score, p[j]);
      }
      float sum = 0.0f;
      for (float& v : p) {
        v = std::exp(v - max_score);
        sum += v;
      }
      std::fill(o_lat.begin(), o_lat.end(), 0.0f);
      for (std::size_t j = 0; j < rows.size(); ++j) {
        float const pj = p[j] / sum;
        for (std::int64_t c = 0; c < kv_lora; ++c) {
          o_lat[static_cast<std::size_t>(c)] += pj * rows[j][c];
        }
      }
      float* oh = o.data() + (t * heads + h) * dims.v_head;
      for (std::int64_t v = 0; v < dims.v_head; ++v) {
        oh[v] = dot(weights.kv_b.w.data() + (h * kv_b_rows + dims.nope + v) * kv_lora, o_lat.data(),
                    kv_lora);
      }
    }
  }
  linear(o, weights.o.w, heads * dims.v_head, dims.hidden, out);
}

}  // namespace gcmoe::model::glm
