#pragma once
// Zeroes the L1 -> L2 handshake's row counters (Fp8ExpertGemmArgs::rows_done) after the L2 that
// acquired them, so the next launch pair starts from zero: a kernel on the same stream, launched
// by PDL so its launch overlaps L2 (which must let it start: allow_overlap_next); it waits for L2
// to complete before it writes, and lets the kernel after it start launching (a launch chain,
// hopper::enter_launch_chain). Where a combine follows every L2 of a layer run, it zeroes them
// instead (MoeLayerSync::combine_clears_rows); this kernel serves the FFN benchmarks and an
// expert-parallel rank whose combine does not run (no tokens of its own).

#include <cuda_runtime.h>

#include "engine/common/status.h"

namespace gcmoe::kernels {

Status launch_clear_rows_done(int* rows_done, int rows, bool overlap_previous, cudaStream_t stream);

// Loads the kernel (call before concurrent launches; lazy loading under a spinning kernel
// deadlocks).
Status preload_clear_rows_done();

}  // namespace gcmoe::kernels
