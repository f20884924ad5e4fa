#pragma once
// The router's gate GEMV for decode batches (T ≤ 16): logits[t][e] = sum over h of x[t][h] *
// w[e][h] in fp32 on the CUDA cores, written directly (no split partials; route() then runs its
// top-k kernel over one "split"). A block owns two experts; each of its eight warps a contiguous
// eighth of H, read as float4 by its lanes (the gate rows once, coalesced; the few x rows from
// L1/L2); warp sums by shuffles, then the warps' sums in warp order: one deterministic fp32 order
// per (t, e).

#include <cuda_runtime.h>

#include <cstdint>

namespace gcmoe::kernels {

inline constexpr int kRouterGemvMaxTokens = 16;

// T ≤ kRouterGemvMaxTokens and the rows readable as 16-byte vectors (H a multiple of 4, both
// matrices 16-byte aligned).
bool router_gemv_supported(float const* x, float const* w, int tokens, int hidden);

// logits: [tokens, experts] fp32. chained: hopper::enter_launch_chain.
cudaError_t launch_router_logits_gemv(float const* x, float const* w, int tokens, int hidden,
                                      int experts, float* logits, cudaStream_t stream,
                                      bool chained);

}  // namespace gcmoe::kernels
