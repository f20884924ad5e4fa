#pragma once
// The expert GEMMs' token-ring handshake (FP8 and MXFP4 WGMMA kernels): before reading rows
// [pass, pass + rows), a producer warp acquires the readiness counters of the ring blocks holding
// them — each lane polls one block until its counter reaches the epoch (acquire at gpu or system
// scope), or the deadline passes: then it raises the rows bit of args.error (the host turns it into
// DEADLINE_EXCEEDED) and goes on, so a producer that never arrives ends the layer with an error,
// never a hang.

#include "kernels/hopper/ptx.cuh"
#include "kernels/moe/fp8_expert_gemm.h"
#include "kernels/moe/wait_sites.h"

namespace gcmoe::kernels {

// The epoch the rows' counters must reach: a replayed graph's lives on the device (the layer's
// last kernel advances it), a plain launch's in the arguments.
__device__ __forceinline__ int ready_epoch(Fp8ExpertGemmArgs const& args) {
  return args.ready_epoch_device != nullptr ? *args.ready_epoch_device : args.ready_epoch;
}

// Whether the kernel waits for the previous grid (griddepcontrol.wait) before reading x: when it
// was launched to overlap it, unless it acquires its rows one by one from L1's rows_done
// (Fp8ExpertGemmArgs::x_ready_by_rows).
__device__ __forceinline__ bool waits_for_prior_grid(Fp8ExpertGemmArgs const& args) {
  return args.overlap_previous && !args.x_ready_by_rows;
}

__device__ inline void wait_rows_ready(Fp8ExpertGemmArgs const& args, int epoch, int pass, int rows,
                                       int lane) {
  int const first = pass / args.ready_block_rows;
  int const last = (pass + rows - 1) / args.ready_block_rows;
  for (int b = first + lane; b <= last; b += 32) {
    if (!hopper::spin_until_at_least(args.ready_blocks + b, epoch, args.ready_timeout_ns,
                                     args.ready_system_scope)) {
      atomicOr(args.error, kWaitRows);
    }
  }
  __syncwarp();
}

}  // namespace gcmoe::kernels
