#pragma once
// Weight bytes one expert-parallel rank holds, from the family's weight spec (engine/model/
// weights): every replicated tensor (embeddings, head, attention, norms, routers, shared experts,
// dense MLPs) plus the rank's contiguous E/N routed experts of every MoE layer. MTP / DSpark
// stages are left out unless asked for (decode serving does not run them). V4.1's Engram tables
// (`engram.embed`, ~190 GiB) are placed in host memory — they are gathered a few rows per token
// and cannot fit a GPU — and counted separately.

#include <cstdint>

#include "engine/common/status.h"
#include "engine/model/weights/weight_spec.h"

namespace gcmoe::plan {

struct RankWeights {
  std::int64_t replicated_bytes = 0;     // on every rank's GPU
  std::int64_t routed_expert_bytes = 0;  // this rank's experts, on its GPU
  std::int64_t host_bytes = 0;           // host-resident tables (one copy per node)
  std::int64_t experts_per_layer = 0;    // this rank's experts in each MoE layer

  std::int64_t device_bytes() const { return replicated_bytes + routed_expert_bytes; }
};

// INVALID_ARGUMENT unless 0 <= rank < ranks and `ranks` divides every MoE layer's experts.
StatusOr<RankWeights> rank_weights(model::ModelSpec const& spec, std::int64_t ranks,
                                   std::int64_t rank, bool with_mtp);

}  // namespace gcmoe::plan
