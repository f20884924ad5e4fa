#pragma once
// The paged KV cache of one rank's GLM-5.2 model (fp32 on the CPU backend). Physical rows are
// block · block_size + offset (token_batch.h kv_row); the scheduler owns the block tables. Per
// token and layer it holds the MLA latent in its absorbed-decode form — [ckv (kv_lora_rank, after
// kv_a_layernorm) | k_pe (qk_rope_head_dim, after RoPE)], shared by all heads (512 + 64 at real
// size) — and, on the "full" indexer layers only, the indexer key (index_head_dim, after k_norm
// and RoPE). "shared" layers keep no indexer keys: they reuse the previous full layer's selection.

#include <cstdint>
#include <vector>

#include "engine/model/glm/glm_dims.h"

namespace gcmoe::model::glm {

class KvCache {
 public:
  KvCache(GlmDims const& dims, std::int32_t blocks, std::int32_t block_size);

  std::int32_t blocks() const { return blocks_; }
  std::int32_t block_size() const { return block_size_; }
  // Floats held per token over all layers.
  std::int64_t floats_per_token() const {
    return layers_ * latent_width_ + full_layers_ * key_width_;
  }

  float* latent(std::int64_t layer, std::int64_t row) {
    return latent_.data() + (layer * rows_ + row) * latent_width_;
  }
  float const* latent(std::int64_t layer, std::int64_t row) const {
    return latent_.data() + (layer * rows_ + row) * latent_width_;
  }
  // `layer` must be a full indexer layer.
  float* index_key(std::int64_t layer, std::int64_t row) {
    return index_keys_.data() +
           (key_slot_[static_cast<std::size_t>(layer)] * rows_ + row) * key_width_;
  }
  float const* index_key(std::int64_t layer, std::int64_t row) const {
    return index_keys_.data() +
           (key_slot_[static_cast<std::size_t>(layer)] * rows_ + row) * key_width_;
  }

 private:
  std::int32_t blocks_ = 0;
  std::int32_t block_size_ = 0;
  std::int64_t rows_ = 0;
  std::int64_t layers_ = 0;
  std::int64_t full_layers_ = 0;
  std::int64_t latent_width_ = 0;
  std::int64_t key_width_ = 0;
  std::vector<std::int64_t> key_slot_;  // per layer: its index-key plane, or -1 (shared layer)
  std::vector<float> latent_;           // [layers, rows, latent_width]
  std::vector<float> index_keys_;       // [full layers, rows, index_head_dim]
};

}  // namespace gcmoe::model::glm
