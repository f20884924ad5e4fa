#include "engine/model/glm/kv_cache.h"

namespace gcmoe::model::glm {

KvCache::KvCache(GlmDims const& dims, std::int32_t const blocks, std::int32_t const block_size)
    : blocks_(blocks),
      block_size_(block_size),
      rows_(static_cast<std::int64_t>(blocks) * block_size),
      layers_(dims.layers),
      full_layers_(dims.full_indexer_layers()),
      latent_width_(dims.latent_width()),
      key_width_(dims.index_head_dim) {
  std::int64_t next = 0;
  for (bool const full : dims.indexer_full) {
    key_slot_.push_back(full ? next++ : -1);
  }
  latent_.assign(static_cast<std::size_t>(layers_ * rows_ * latent_width_), 0.0f);
  index_keys_.assign(static_cast<std::size_t>(full_layers_ * rows_ * key_width_), 0.0f);
}

}  // namespace gcmoe::model::glm
