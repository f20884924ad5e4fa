#pragma once
// GC-MoE compute-partition kernel, version 2: the FP8×FP8 expert FFN on Hopper's native FP8
// tensor path (WGMMA m64nNk32 e4m3, f32 accumulation), swap-AB: weight rows on M (one 64-row tile
// per consumer warpgroup), the expert's token rows on N (8 to 128 per pass). Same contract as
// version 1 (fp8_expert_gemm.h: Fp8ExpertGemmArgs, one launch per projection, SwiGLU and the
// requantization fused into L1), with the weights packed by fp8_expert_wgmma_layout.h.
//
// Pipeline per CTA: producer warps (two: weights; x rows) stream each (tile, chunk) — 8 KB, already
// in WGMMA's swizzled shared-memory image — with bulk copies (TMA, no tensor map) that complete on
// a per-stage mbarrier, and the expert's x rows for that chunk with cp.async (swizzled by address,
// rows past the expert's segment zero-filled) that arrive on the same barrier; the consumer
// warpgroups wait on it, run four WGMMA k-steps into a chunk accumulator, release the stage, and
// fold the chunk in with its weight scale and each token's activation scale (the 128×128 blocks
// make every chunk a separately scaled partial sum).
// Versions and measurements: bench/NOTES.md, "FP8 expert FFN" (v2.12: the L1 epilogue's scale once
// per column; v2.13: the chunk loop's stage cursor and descriptors by increment; v2.14: one bulk
// copy per stage, fp8_expert_wgmma_layout.h; v2.16: no local-memory spills; v2.17–v2.18: fewer
// loop instructions).
// CPU reference: kernels/moe/expert_ffn_ref.h.

#include <cuda_runtime.h>

#include "engine/common/status.h"
#include "kernels/moe/fp8_expert_gemm.h"

namespace gcmoe::kernels {

// Loads every instantiation and raises its shared-memory limit; call before concurrent launches.
Status preload_fp8_expert_wgmma();

// The CTAs one SM holds of the pass width's kernel (8, 16, 64, 96 or 128 rows; the x-by-TMA
// variant below 64) at the shared memory a PDL launch of `ctas` CTAs asks for over `sms` SMs
// (pdl_spread_smem_bytes), by the occupancy API: what the GPU test holds the spread to. Call
// after preload_fp8_expert_wgmma.
StatusOr<int> fp8_expert_wgmma_pdl_ctas_per_sm(ExpertGemmStage stage, int pass_rows, int ctas,
                                               int sms);

// args.tiles counts 16-row tiles as in version 1 (L1: I/8, L2: H/16); args.weights /
// weight_scales point at pack_gate_up_wgmma / pack_down_wgmma images, weight_stride and
// scale_stride are one expert's bytes and floats in them. Rows per pass: 8 (hint ≤ 8), 16 (hint
// ≤ 32), 64 (≤ 64), 96 (≤ 96), then 128, chosen by rows_per_expert_hint (expert_pass_policy.h,
// kFp8PassBands); up to 8 passes of an expert's rows run side by side (ceil(hint / rows per
// pass)), more rows loop inside the CTAs.
// Passes of 64 rows and more run on a kernel without a producer warp (fp8_expert_wgmma_wide.cuh):
// up to 96 rows one WGMMA per k-step trimmed to the rows present in steps of 8 (8 to 96), 128
// rows as two 64-row halves per weight stage trimmed in steps of 16.
Status launch_fp8_expert_wgmma(Fp8ExpertGemmArgs const& args, cudaStream_t stream);

// A fixed expert (the shared expert alone) whose rows the passes side by side cover in one go
// runs with its K chunks split over a cluster of CTAs per (tile group, pass) where its tile groups
// alone would leave SMs idle (8- and 16-row passes; expert_split_k.cuh, expert_pass_policy.h's
// lone_expert_k_splits) — when the launch has the GPU to itself (args.fixed_expert_alone).
//
// Tests and benchmarks: a pass configuration forced instead of the policy's. rows: 8, 16, 64, 96
// or 128 (0: the policy's); passes side by side 1..kMaxParallelPasses (0: ceil(hint / rows));
// k_splits 1..8 (0: the policy's; more than 1 only where a split is allowed, else
// INVALID_ARGUMENT).
struct Fp8WgmmaPasses {
  int rows = 0;
  int passes = 0;
  int k_splits = 0;
};
Status launch_fp8_expert_wgmma(Fp8ExpertGemmArgs const& args, cudaStream_t stream,
                               Fp8WgmmaPasses const& forced);

}  // namespace gcmoe::kernels
