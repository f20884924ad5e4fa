#pragma once
// Checkpoint bytes estimated from a config alone (no safetensors headers), for `gcmoe inspect` on
// a directory holding only config.json and for capacity planning. Routed and shared experts and
// dense MLPs are exact for the release formats; the replicated part counts embeddings, the main
// attention projections, norms, router gates and hyper-connection mixers of the trunk layers, and
// leaves out compressors, indexers, Engram tables and MTP/DSpark stages, so it is a lower bound.

#include <cstdint>

#include "engine/common/status.h"
#include "engine/config/model_config.h"

namespace gcmoe::config {

// Bytes of one [rows, cols] weight (cols along K) stored in `format`, block scales included.
std::int64_t weight_bytes(WeightFormat const& format, std::int64_t rows, std::int64_t cols);

struct SizeEstimate {
  std::int64_t bytes_per_expert = 0;  // one routed expert: gate, up and down projections
  std::int64_t experts_per_layer = 0;
  std::int64_t moe_layers = 0;           // trunk MoE layers
  std::int64_t routed_expert_bytes = 0;  // all routed experts of the trunk
  std::int64_t replicated_bytes = 0;     // every rank holds these (a lower bound, see above)

  std::int64_t total_bytes() const { return routed_expert_bytes + replicated_bytes; }
  // Replicated bytes plus the rank's contiguous share of each layer's experts.
  StatusOr<std::int64_t> rank_bytes(std::int64_t ranks, std::int64_t rank) const;
};

SizeEstimate estimate_sizes(ModelConfig const& config);

}  // namespace gcmoe::config
