#pragma once
// The MoE router on the GPU: fp32 gate GEMM, score function, correction bias for the selection
// only, top-k (or hash routing by token id), renormalization and routed scaling. Semantics,
// output order and tie rule: kernels/moe/router_ref.h.
//
// Two launches: the gate GEMM, then one block per token: its threads sum the partials and score,
// one warp selects the top k by k rounds of warp argmax (ties to the lower expert). The GEMM is a
// GEMV for up to 16 tokens (a block per 2 experts), beyond that 64 tokens x 64 experts per block
// split over the hidden size when the tiles alone cannot fill the GPU (partial sums go to the
// workspace and are added in a fixed order, so results are deterministic): on the tensor cores as
// 3xTF32 when the rows are 16-byte aligned (router_logits_mma.h), else in fp32 on the CUDA cores.
// No host synchronization and no allocation: capturable in a CUDA graph for a fixed shape.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "engine/common/status.h"
#include "kernels/moe/router_ref.h"

namespace gcmoe::kernels {

struct RouterDeviceInputs {
  float const* x = nullptr;                  // [T, H]
  float const* gate_weight = nullptr;        // [E, H]
  float const* bias = nullptr;               // [E], or null: no correction bias
  std::int32_t const* token_ids = nullptr;   // [T], hash layers only; each in [0, vocab)
  std::int32_t const* hash_table = nullptr;  // [vocab, k] expert ids, or null: biased top-k
};

struct RouterDeviceOutputs {
  std::int32_t* topk_ids = nullptr;  // [T, k]
  float* topk_weights = nullptr;     // [T, k]
};

// Bytes of workspace route() needs for `shape` (the split-K partial logits).
std::size_t router_workspace_bytes(RouterShape const& shape);

// chained: both launches in a launch chain (hopper::enter_launch_chain): each launched to start
// while the kernel before it in the stream runs, waiting for it first, and letting the next start.
Status route(RouterDeviceInputs const& inputs, RouterShape const& shape, RouterParams const& params,
             RouterDeviceOutputs const& outputs, void* workspace, std::size_t workspace_bytes,
             cudaStream_t stream, bool chained = false);

}  // namespace gcmoe::kernels
