#pragma once
// KV-cache bytes a sequence needs on its rank, per family, in bf16 (2 B per value) — the cache
// format the engine keeps (model-spec §4.4). Attention is data-parallel: a sequence's whole KV
// lives on the rank that runs it.
//   GLM-5.2 (MLA + DSA): every layer caches [ckv 512 | k_pe 64] per token; each layer that runs
//     its own indexer ("full" layers, IndexShare) also caches a 128-value indexer key.
//   DeepSeek-V4.1: compressed entries written by the kv-source layers (1/ratio entries per token
//     each, head_dim values per entry) and their indexer keys (index sources that are also kv
//     sources, index_head_dim values per entry); plus a fixed sliding-window ring of
//     sliding_window × head_dim per layer.
//   DeepSeek-V4: per layer with ratio r > 0, 1/r compressed entries per token of head_dim values
//     (+ indexer keys on ratio-4 layers); plus the window ring on every layer.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/config/model_config.h"

namespace gcmoe::plan {

inline constexpr std::int64_t kKvValueBytes = 2;  // bf16

struct KvComponent {
  std::string what;  // "ckv+k_pe: 78 layers x 576 values"
  double bytes_per_token = 0.0;
};

struct KvFootprint {
  std::vector<KvComponent> per_token;         // grows with the sequence
  std::int64_t fixed_bytes_per_sequence = 0;  // window rings, independent of length
  std::string fixed_what;

  // Rounded up to whole bytes.
  std::int64_t bytes_per_token() const;
};

KvFootprint kv_footprint(config::ModelConfig const& config);

}  // namespace gcmoe::plan
