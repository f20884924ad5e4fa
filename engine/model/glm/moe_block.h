#pragma once
// The MoE MLP of a GLM-5.2 layer, expert parallel over the ranks of `comm` (model-spec §2.3):
//   1. every rank's normalized tokens are gathered (comm.all_gather, rank order), so each rank
//      sees the whole group's T_all rows; a rank with no tokens still joins;
//   2. the router (kernels/moe router_ref: fp32 gate GEMM, sigmoid, correction bias for the
//      selection only, top-k, renormalize + 1e-20, × routed_scaling) runs on all rows — every
//      rank holds the router, so all ranks agree on the routing;
//   3. each of this rank's routed experts (kernels/moe expert_ffn_ref, exact fp32, no clamp) runs
//      on the rows routed to it, and adds weight · output into a [T_all, hidden] fp32 sum, in
//      ascending expert order;
//   4. comm.all_reduce_sum adds the ranks' partial sums; the rank keeps its own rows and adds the
//      shared expert (unscaled) on them.
// kernels/moe moe_layer_ref is not used here: it needs every expert's weights on one rank and
// rounds its output to bf16, where the transformers reference (and this fp32 path) does not.

#include <span>

#include "engine/common/status.h"
#include "engine/model/glm/glm_dims.h"
#include "engine/model/glm/glm_weights.h"
#include "engine/runtime/communicator.h"

namespace gcmoe::model::glm {

// x: [T, hidden] this rank's normalized tokens (T may be 0); out: [T, hidden] (overwritten).
// Errors: the communicator's (DEADLINE_EXCEEDED, UNAVAILABLE), INTERNAL for inconsistent sizes.
Status moe_block(MoeWeights const& weights, GlmDims const& dims, runtime::Communicator& comm,
                 std::span<float const> x, std::span<float> out);

}  // namespace gcmoe::model::glm
