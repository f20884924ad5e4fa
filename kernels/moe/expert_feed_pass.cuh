#pragma once
// The order in which the feed warps of an expert WGMMA kernel with producer warps (FP8:
// fp8_expert_wgmma_kernel.cuh, MXFP4: mxfp4_expert_wgmma_kernel.cuh) fill one pass's stages:
// the first stages' weights go out before the pass's rows are known to be ready (weights are
// static, so the HBM stream starts at once), then the rows' readiness is acquired (and the
// previous grid, whose output x is, waited for), then the x rows follow, chunk by chunk. With one
// feed warp it does both in that order; with two, the weights warp never waits for the rows.

#include "kernels/hopper/ptx.cuh"

namespace gcmoe::kernels {

// The feed warps' role: the first (or the only one) issues the weights, the second (or the only
// one) the x rows and scales.
struct FeedRole {
  bool weights = true;
  bool tokens = true;
};

template <int kFeedWarps>
__device__ __forceinline__ FeedRole feed_role(int warp, int first_feed_warp) {
  static_assert(kFeedWarps == 1 || kFeedWarps == 2);
  return {kFeedWarps == 1 || warp == first_feed_warp,
          kFeedWarps == 1 || warp == first_feed_warp + 1};
}

// One pass of `chunks` chunks over `stages` stages. issue_weights(c) and issue_tokens(c) each wait
// for their part of the stage to be released and fill it; acquire_rows() acquires the pass's rows
// (readiness counters, where the launch has them); wait_prior is cleared once the previous grid
// has been waited for (the first pass only).
template <typename AcquireRows, typename IssueWeights, typename IssueTokens>
__device__ __forceinline__ void feed_pass(FeedRole role, int chunks, int stages, bool& wait_prior,
                                          AcquireRows const& acquire_rows,
                                          IssueWeights const& issue_weights,
                                          IssueTokens const& issue_tokens) {
  int const early = min(stages, chunks);
  if (role.weights) {
    for (int c = 0; c < early; ++c) {
      issue_weights(c);
    }
  }
  if (role.tokens) {
    if (wait_prior) {
      hopper::wait_prior_grid();  // x (L1's h) is the previous kernel's output
      wait_prior = false;
    }
    acquire_rows();
    for (int c = 0; c < early; ++c) {
      issue_tokens(c);
    }
  }
  for (int c = early; c < chunks; ++c) {
    if (role.weights) {
      issue_weights(c);
    }
    if (role.tokens) {
      issue_tokens(c);
    }
  }
}

}  // namespace gcmoe::kernels
