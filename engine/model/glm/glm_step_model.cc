#include "engine/model/glm/glm_step_model.h"

#include <algorithm>
#include <utility>

#include "engine/common/check.h"
#include "engine/model/glm/dense_mlp.h"
#include "engine/model/glm/dsa_indexer.h"
#include "engine/model/glm/linear.h"
#include "engine/model/glm/mla_attention.h"
#include "engine/model/glm/moe_block.h"
#include "engine/model/glm/norms.h"

namespace gcmoe::model::glm {

GlmStepModel::GlmStepModel(GlmDims dims, GlmWeights weights, std::unique_ptr<KvCache> cache,
                           std::int32_t const max_batch_tokens, runtime::Communicator& comm)
    : dims_(std::move(dims)),
      weights_(std::move(weights)),
      cache_(std::move(cache)),
      limits_{.vocab = dims_.vocab,
              .max_context = dims_.max_context,
              .kv_blocks = cache_->blocks(),
              .kv_block_size = cache_->block_size(),
              .max_batch_tokens = max_batch_tokens},
      rope_(dims_.rope, dims_.rope_theta),
      comm_(comm) {
  info_.family = "glm_moe_dsa";
  info_.vocab_size = static_cast<std::int32_t>(dims_.vocab);
  info_.max_context = dims_.max_context;
  info_.eos_token_ids = dims_.eos_token_ids;
  info_.kv_bytes_per_token = cache_->floats_per_token() * static_cast<std::int64_t>(sizeof(float));
}

Status GlmStepModel::step(runtime::StepBatch const& batch, std::vector<float>& logits) {
  StatusOr<TokenBatch> tokens = make_token_batch(batch, limits_);
  if (!tokens.ok()) {
    if (comm_.world_size() > 1) {
      std::vector<float> unused;
      // The other ranks are already in this step's MoE exchanges; join them with no tokens.
      Status const joined = forward(TokenBatch{}, unused);
      static_cast<void>(joined);
    }
    return tokens.status();
  }
  return forward(*tokens, logits);
}

Status GlmStepModel::forward(TokenBatch const& batch, std::vector<float>& logits) {
  std::int64_t const tokens = batch.tokens();
  auto const hidden = static_cast<std::size_t>(dims_.hidden);
  std::size_t const width = static_cast<std::size_t>(tokens) * hidden;
  std::vector<float> h(width);
  for (std::int64_t t = 0; t < tokens; ++t) {
    std::copy_n(weights_.embed.begin() +
                    static_cast<std::ptrdiff_t>(batch.ids[static_cast<std::size_t>(t)] * hidden),
                hidden, h.begin() + static_cast<std::ptrdiff_t>(t * hidden));
  }
  std::vector<float> x(width);
  std::vector<float> y(width);
  MlaQueries queries;
  Selection selection;
  for (std::int64_t layer = 0; layer < dims_.layers; ++layer) {
    LayerWeights const& lw = weights_.layers[static_cast<std::size_t>(layer)];
    if (tokens > 0) {
      x = h;
      rms_norm(x, lw.input_norm, dims_.rms_eps);
      mla_project(lw.attention, dims_, rope_, x, batch, layer, *cache_, queries);
      if (lw.attention.indexer.has_value()) {
        dsa_indexer(*lw.attention.indexer, dims_, rope_, x, queries.q_resid, batch, layer, *cache_,
                    selection);
      }
      mla_attend(lw.attention, dims_, queries, selection, batch, layer, *cache_, y);
      for (std::size_t i = 0; i < width; ++i) {
        h[i] += y[i];
      }
    }
    x = h;
    rms_norm(x, lw.post_attention_norm, dims_.rms_eps);
    if (lw.moe.has_value()) {
      // Every rank joins, with or without tokens.
      GCMOE_RETURN_IF_ERROR(moe_block(*lw.moe, dims_, comm_, x, y));
    } else if (tokens > 0) {
      swiglu_mlp(*lw.dense, x, y);
    }
    if (tokens > 0) {
      for (std::size_t i = 0; i < width; ++i) {
        h[i] += y[i];
      }
    }
  }

  std::vector<float> last(batch.sample_rows.size() * hidden);
  for (std::size_t r = 0; r < batch.sample_rows.size(); ++r) {
    std::copy_n(h.begin() + static_cast<std::ptrdiff_t>(batch.sample_rows[r]) *
                                static_cast<std::ptrdiff_t>(hidden),
                hidden, last.begin() + static_cast<std::ptrdiff_t>(r * hidden));
  }
  rms_norm(last, weights_.final_norm, dims_.rms_eps);
  logits.resize(batch.sample_rows.size() * static_cast<std::size_t>(dims_.vocab));
  linear(last, weights_.lm_head.w, dims_.hidden, dims_.vocab, logits);
  return Status();
}

}  // namespace gcmoe::model::glm
