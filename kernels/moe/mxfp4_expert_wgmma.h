#pragma once
// GC-MoE compute-partition kernel for DeepSeek-V4/V4.1 routed experts: the FP8-activation ×
// MXFP4-weight expert FFN on Hopper (sm_90a). Same contract and pipeline as the FP8 WGMMA kernel
// (fp8_expert_wgmma.h: swap-AB, one launch per projection, a producer warp streaming (tile, chunk)
// images with bulk copies on per-stage mbarriers, consumer warpgroups, SwiGLU with DeepSeek's
// clamp, routing weight and power-of-two FP8 requantization fused into L1, bf16 y out of L2,
// readiness counters), but the weights are e2m1 codes with e8m0 scales per 32 K: each consumer
// thread loads its share of a (tile, chunk) from shared memory with two 16-byte loads, decodes
// the codes in registers to e4m3 (prmt lookup with the per-32 scale ratios folded into the
// exponents) and runs WGMMA with A from registers (hopper/wgmma_register_a.cuh). The layout and
// the scale handling: kernels/moe/mxfp4_expert_wgmma_layout.h.
// CPU reference: kernels/moe/expert_ffn_ref.h on the dequantized weights.
//
// Why the scales are folded (layout header): per-32 promotion everywhere (every k-step its own
// WGMMA, wait and f32 fold) measured 8-11% slower at V4.1's shape for T >= 2 on an H200
// (bench_mxfp4_expert_ffn, option mxfp4_all_wide), and folding the ratios costs no accuracy: the
// decoded e4m3 values are exactly the dequantized weights over 2^(E-133). The per-32 path stays
// for tile-chunks whose bytes spread more than 11 exponents or hold a row whose largest byte is
// below 7 (expected rare; not yet counted on a real checkpoint: PackedMxfp4Expert::wide_tile_chunks
// says how many), so any byte 0..254 is exact.
// Registers (ptxas, sm_90a, CUDA 13.0; version 2): L1 56/85/96 for 8/16/32 rows per pass, L2
// 56/72/96; no spills, no stack frame. Version 2 (bench/NOTES.md, "MXFP4 expert GEMM"): 175-201
// instead of 201-226 SASS instructions per warp per narrow chunk (hoisted addresses, stage/phase
// by increment, the row scale as one shift; decode helpers in mxfp4_register_decode.cuh); ncu (ep1
// T=8, V4.1 shape): issue slots 58-64% busy, ALU 61-65%, DRAM 59% — the consumers mostly wait on
// the stage's full barrier (long scoreboard 3.7 cycles per issued instruction) and on WGMMA, not on
// the decode's issue rate. Version 3: the weight and x parts of a stage complete and are released
// on barriers of their own (so the weight part can be released before the decode: an option,
// measured 1-2% slower), and a stream-only probe: the same pipeline with the consumers releasing
// stages unread streams at 90-100% of the copy ceiling at T >= 8, the full kernel at 60-68% —
// the feed is not what limits it (bench/NOTES.md, v3). Registers (v3): L1 56/83/96, L2 56/71/95.

#include <cuda_runtime.h>

#include "engine/common/status.h"
#include "kernels/moe/fp8_expert_gemm.h"

namespace gcmoe::kernels {

// Loads every instantiation and raises its shared-memory limit; call before concurrent launches.
Status preload_mxfp4_expert_wgmma();

// Fp8ExpertGemmArgs as for the FP8 kernels, with:
// - weights: the PackedMxfp4Expert::codes of all experts, expert e at e * weight_stride bytes;
// - weight_scales: the PackedMxfp4Expert::scales words of all experts reinterpreted as float (the
//   kernel reads their bits, never their values), expert e at e * scale_stride words;
// - tiles: 16-row tiles as in version 1, L1 I/8 (a multiple of 16), L2 H/16 (a multiple of 8);
// - chunks: K / 128;
// - DeepSeek semantics: requant RequantScale::kPow2, swiglu_limit 10, route_weights set.
// Rows per pass 8, 16 or 32 by rows_per_expert_hint, up to 8 passes side by side. Programmatic
// dependent launch (overlap_previous / allow_overlap_next) as the FP8 version. Not supported
// (INVALID_ARGUMENT): fixed_expert.
Status launch_mxfp4_expert_wgmma(Fp8ExpertGemmArgs const& args, cudaStream_t stream);

// How the pipeline hands stages back (version 3; bench/NOTES.md, "MXFP4 expert GEMM", v3). The
// defaults are what launch_mxfp4_expert_wgmma(args, stream) runs; the others exist so that the
// benchmark compares them in one run.
struct Mxfp4WgmmaTuning {
  // true: the consumers release a stage's weight images as soon as their share is in registers
  // (before the decode and the MMA; the x rows after the MMA). Measured 1-2% slower than the
  // default, version 2's single release after the MMA, at every point (bench/NOTES.md, v3).
  bool early_release = false;
  // Benchmark probe only (outputs are not written): the consumers release every stage unread, so
  // the kernel measures its own weight stream without decode or MMA.
  bool stream_only = false;
};
Status launch_mxfp4_expert_wgmma(Fp8ExpertGemmArgs const& args, cudaStream_t stream,
                                 Mxfp4WgmmaTuning const& tuning);

}  // namespace gcmoe::kernels
