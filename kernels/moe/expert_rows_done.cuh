#pragma once
// L1's side of the L1 -> L2 handshake by rows (Fp8ExpertGemmArgs::rows_done): once a tile group's
// pass over rows [pass, pass + rows) has stored its h columns and their scales, it adds one to
// each row's counter with release semantics; L2 acquires a row once every tile group has
// (expert_rows_ready.cuh, target = the tile groups) instead of waiting for the whole L1 grid. The
// FP8 and MXFP4 kernels call it at the end of each L1 pass epilogue (expert_pass_epilogue.cuh),
// once per (tile group, pass).
//
// Why counters that a kernel after L2 zeroes, not epochs: an epoch per row needs the last of the
// groups to know it is last (an atomic's round trip before the CTA may exit) and a second release;
// this costs one release per row and no round trip. The releasing warps still wait at the
// release's MEMBAR for the CTA's h stores (bench/NOTES.md, twenty-first session).

#include "kernels/hopper/ptx.cuh"
#include "kernels/moe/fp8_expert_gemm.h"

namespace gcmoe::kernels {

// tid: the thread's index among the CTA's consumer threads (0-based, at least one per row:
// L1 CTAs have 512); barrier_id / consumer_threads: the named barrier all consumer threads pass
// after their stores.
__device__ __forceinline__ void release_pass_rows(Fp8ExpertGemmArgs const& args, int pass, int rows,
                                                  int tid, int barrier_id, int consumer_threads) {
  hopper::named_barrier_sync(barrier_id, consumer_threads);  // every h store of the pass is issued
  if (tid < rows) {
    // Release at gpu scope: cumulative over the stores the barrier ordered before it.
    hopper::red_release_add_gpu(args.rows_done + pass + tid, 1);
  }
}

}  // namespace gcmoe::kernels
