#include "engine/plan/kv_footprint.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <variant>

namespace gcmoe::plan {
namespace {

KvFootprint glm_footprint(config::ModelConfig const& c, config::GlmMoeDsaExtras const& glm) {
  KvFootprint kv;
  std::int64_t const latent = glm.kv_lora_rank + glm.qk_rope_head_dim;
  kv.per_token.push_back(
      {fmt::format("ckv+k_pe: {} layers x {} values", c.num_hidden_layers, latent),
       static_cast<double>(c.num_hidden_layers * latent * kKvValueBytes)});
  std::int64_t full = 0;
  for (std::int64_t layer = 0; layer < c.num_hidden_layers; ++layer) {
    full += glm.indexer_full(layer) ? 1 : 0;
  }
  kv.per_token.push_back(
      {fmt::format("indexer keys: {} full layers x {} values", full, glm.index_head_dim),
       static_cast<double>(full * glm.index_head_dim * kKvValueBytes)});
  return kv;
}

void add_window(KvFootprint& kv, std::int64_t layers, config::DeepseekV4Extras const& v4) {
  kv.fixed_bytes_per_sequence = layers * v4.sliding_window * v4.head_dim * kKvValueBytes;
  kv.fixed_what = fmt::format("window ring: {} layers x {} slots x {} values", layers,
                              v4.sliding_window, v4.head_dim);
}

std::int64_t ratio_of(config::DeepseekV4Extras const& v4, std::int64_t layer) {
  return layer >= 0 && static_cast<std::size_t>(layer) < v4.compress_ratios.size()
             ? v4.compress_ratios[static_cast<std::size_t>(layer)]
             : 0;
}

KvFootprint v41_footprint(config::ModelConfig const& c, config::DeepseekV41Extras const& v41) {
  KvFootprint kv;
  config::DeepseekV4Extras const& v4 = v41.v4;
  double entries = 0.0;
  double index_entries = 0.0;
  for (std::int64_t const source : v41.kv_source_layer_ids) {
    std::int64_t const ratio = std::max<std::int64_t>(ratio_of(v4, source), 1);
    entries += 1.0 / static_cast<double>(ratio);
    bool const indexes =
        std::find(v41.index_source_layer_ids.begin(), v41.index_source_layer_ids.end(), source) !=
        v41.index_source_layer_ids.end();
    index_entries += indexes ? 1.0 / static_cast<double>(ratio) : 0.0;
  }
  kv.per_token.push_back({fmt::format("compressed KV: {} sources, {:.3g} entries/token x {} values",
                                      v41.kv_source_layer_ids.size(), entries, v4.head_dim),
                          entries * static_cast<double>(v4.head_dim * kKvValueBytes)});
  kv.per_token.push_back({fmt::format("indexer keys: {:.3g} entries/token x {} values",
                                      index_entries, v4.index_head_dim),
                          index_entries * static_cast<double>(v4.index_head_dim * kKvValueBytes)});
  add_window(kv, c.num_hidden_layers, v4);
  return kv;
}

KvFootprint v4_footprint(config::ModelConfig const& c, config::DeepseekV4Extras const& v4) {
  KvFootprint kv;
  double entries = 0.0;
  double index_entries = 0.0;
  for (std::int64_t layer = 0; layer < c.num_hidden_layers; ++layer) {
    std::int64_t const ratio = ratio_of(v4, layer);
    if (ratio > 0) {
      entries += 1.0 / static_cast<double>(ratio);
      index_entries += ratio == 4 ? 0.25 : 0.0;  // CSA layers carry the lightning indexer
    }
  }
  kv.per_token.push_back(
      {fmt::format("compressed KV: {:.4g} entries/token x {} values", entries, v4.head_dim),
       entries * static_cast<double>(v4.head_dim * kKvValueBytes)});
  kv.per_token.push_back({fmt::format("indexer keys: {:.4g} entries/token x {} values",
                                      index_entries, v4.index_head_dim),
                          index_entries * static_cast<double>(v4.index_head_dim * kKvValueBytes)});
  add_window(kv, c.num_hidden_layers, v4);
  return kv;
}

}  // namespace

std::int64_t KvFootprint::bytes_per_token() const {
  double total = 0.0;
  for (KvComponent const& component : per_token) {
    total += component.bytes_per_token;
  }
  return static_cast<std::int64_t>(std::ceil(total));
}

KvFootprint kv_footprint(config::ModelConfig const& config) {
  switch (config.family) {
    case config::ModelFamily::kGlmMoeDsa:
      return glm_footprint(config, std::get<config::GlmMoeDsaExtras>(config.extras));
    case config::ModelFamily::kDeepseekV41:
      return v41_footprint(config, std::get<config::DeepseekV41Extras>(config.extras));
    case config::ModelFamily::kDeepseekV4:
      return v4_footprint(config, std::get<config::DeepseekV4Extras>(config.extras));
  }
  return {};
}

}  // namespace gcmoe::plan
