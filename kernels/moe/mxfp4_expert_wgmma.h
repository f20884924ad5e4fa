#pragma once
// GC-MoE compute-partition kernel for DeepSeek-V4/V4.1 routed experts: the FP8-activation ×
// MXFP4-weight expert FFN on Hopper (sm_90a). Same contract and pipeline as the FP8 WGMMA kernel
// (fp8_expert_wgmma.h: swap-AB, one launch per projection, a producer warp streaming (tile, chunk)
// images with bulk copies on per-stage mbarriers, consumer warpgroups, SwiGLU with DeepSeek's
// clamp, routing weight and power-of-two FP8 requantization fused into L1, bf16 y out of L2,
// readiness counters), but the weights are e2m1 codes with e8m0 scales per 32 K: each consumer
// thread loads its share of a (tile, chunk) from shared memory with two 16-byte loads and decodes
// the codes in registers to e4m3 by byte permutes through a table of 8 e4m3 magnitudes (version
// 6): in a windowed tile (checkpoint-like scales) each row's table holds its block's exponent
// relative to the row's largest, so a chunk's four k-steps chain into one WGMMA accumulator (A
// from registers, hopper/wgmma_register_a.cuh) folded once per chunk with the tokens' scales, and
// the row's base multiplies the pass's sum; in a fallback tile (a row's blocks spread over more
// than 14 exponents) the constant table gives the value times 2^-6 and each k-step runs its own
// WGMMA, folded in f32 with its block's factor 2^(b - 121). The layout and the scale handling:
// kernels/moe/mxfp4_expert_wgmma_layout.h. CPU reference: kernels/moe/expert_ffn_ref.h
// on the dequantized weights.
//
// Version 4 (bench/NOTES.md, "MXFP4 expert GEMM", v4): versions 1-3 folded the per-32 ratios
// into the decoded exponents through a per-(row, k-step) lookup table (one WGMMA chain per chunk,
// a per-32 fallback for chunks whose bytes spread more than 11 exponents); the lookup's ALU work
// was the longest link of each warp's chunk chain. Version 4 runs 138 instead of ~175 SASS
// instructions per warp per chunk (ALU ~55 instead of ~88), every byte 0..248 on one path, and
// measured 1.12-1.16x version 3 at T <= 128 on an H200 (70-79% of the copy ceiling at ep1
// T = 8..64). Version 4.1/4.2: the pass width by the hint (8 rows side by side up to 20, 16 rows
// at two L1 CTAs per SM up to 48, else 32): 1.18-1.45x where it changed the configuration.
// Registers (ptxas, sm_90a, CUDA 13.0): L1 54/56/96, L2 52/66/96 for 8/16/32 rows per pass; the
// 16-row L1 kernel is capped at 56 (2 CTAs per SM) and spills 44 bytes (3 reloads per chunk), the
// 32-row L1 kernel 8 bytes (the expert's row end and one epilogue value, reloaded per pass).
// Version 3's stream-only probe stays; its early release (the weight and x parts of a stage
// released on barriers of their own) was an option until the twenty-third session.
// Version 5: hints above 20 run the producer-less kernel's 32-row passes (two m64n16k32 per
// k-step from one decoded fragment; L1 512 threads at 86 registers, L2 three 256-thread CTAs per SM
// at 80, no spills): one rank of eight at V4.1's shape, T=128 510 -> 442 µs, T=256 830 -> 604. Its
// 64-row passes (forced only) measured no faster: the per-k-step fold (2N FFMA per thread and
// chunk) and the WGMMA issue overhead make the loop issue-bound (bench/NOTES.md v5).
// Version 5.1: two feed warps (weights; x rows and scales) instead of one producer warp: 1.08-1.36x
// at every 8-row point (the one warp could not issue a stage's ~240 instructions as fast as the
// consumers freed stages; bench/NOTES.md v5.1).
// Version 5.2: packed images in tile-group order, a stage's code and scale images one bulk copy
// each (1.02-1.08x everywhere). Version 5.3/5.4: with Fp8ExpertGemmArgs::x_rows set, the 16- and
// 32-row passes load x by one TMA tensor copy per stage (1.04-1.42x); 8-row passes keep cp.async;
// the bands are now 8 rows up to a hint of 12, 16 up to 32, 32 beyond, all in the kernel with
// feed warps (the producer-less kernel is forced-only). bench/NOTES.md v5.2-v5.4. Version 5.5:
// one pass per tile group up to 1.5x the width (expert_pass_policy.h). Version 5.6/5.7: no
// proxy fence where x comes by TMA, and x by TMA at 8-row passes too. Version 5.8: the WGMMA
// width, the per-k-step fold and the token scales trimmed per pass to the rows present (8, 16, 24
// or 32 columns; the fold is 2 N FFMA per thread and chunk), and one 32-row pass per tile group
// for hints 25-72: one rank of eight T=128 1.23x, T=256 1.12x (bench/NOTES.md v5.8). Version 5.9:
// the L1 epilogue shared with the FP8 kernels computes each column's scale once (FP8 v2.12):
// T=128 1.04x, T=256 1.03x. Version 5.10: without early release a stage's weight and x parts
// share one full and one empty barrier (one wait and one arrive less per warp and chunk):
// 1.01-1.03x at most points (bench/NOTES.md v5.10). Version 5.13: the 16-row L1 keeps one WGMMA
// in flight instead of two, which frees the registers it spilled (bench/NOTES.md, twenty-third
// session); early release, the option only the tests ran, is gone. Version 5.14: at 8- and
// 16-row passes every pass starts its ring of stages at stage 0 and the chunk loop is unrolled
// over the stages, so each chunk's stage and its addresses and WGMMA descriptors are constants
// (SASS instructions per chunk: 8-row L1 148 -> 120, 16-row 151 / 172 -> 124 / 146): one GPU
// 1.05-1.09x at T >= 64, the V4.1 layer 1.05-1.09x at T >= 16 (bench/NOTES.md, twenty-fourth
// session). The cp.async kernels (x_rows 0) are gone, since unrolled they spilled: a launch must
// give x_rows. Version 5.15: the 32-row passes unrolled too, at 5 (L1) and 4 (L2) stages instead
// of 10 and 8, whose unrolled loops outgrew the instruction cache: one rank of eight T=128/256
// 1.03-1.08x (bench/NOTES.md, twenty-fifth session). Version 5.16: 48-row passes from hint 45,
// their feed warps in a warpgroup of their own that hands its registers to the consumers
// (setmaxnreg; L1 consumers at 104 instead of 96, L2 at 96 instead of 80, no spills), widths
// trimmed by 8 up to 48, one WGMMA in flight: most experts at one rank of eight T=256 in one
// pass instead of the 32-row pass's loop (bench/NOTES.md, twenty-sixth session). Version 5.17:
// persistent CTAs as an option (Fp8ExpertGemmArgs::work_counters, expert_work_queue.cuh): one CTA
// per SM slot takes (expert, tile group, pass) items from a counter, its stage ring carried from
// item to item. Measured no faster (the weight stream alone, stream-only, within 1% of one CTA
// per item; one rank of eight T=256 3% slower), so the launches without counters keep one CTA
// per item (bench/NOTES.md, twenty-seventh session). Version 6: the windowed layout above (the
// per-k-step fold, 2 N FFMA per thread and chunk at N columns, only in fallback tiles): SASS per
// chunk at 48 / 32 / 16 columns 226 / 183 / 142 -> 145 / 135 / 127; version 5's producer-less
// kernel (forced-only since v5.3) removed (bench/NOTES.md, twenty-eighth session). Version 6.1:
// at widths above 16 a windowed chunk's four k-steps are decoded first and their WGMMAs issued
// back to back as one commit group (138 -> 134 SASS per chunk at 48 columns; bench/NOTES.md,
// thirty-first session).

#include <cuda_runtime.h>

#include "engine/common/status.h"
#include "kernels/moe/fp8_expert_gemm.h"

namespace gcmoe::kernels {

// Loads every instantiation and raises its shared-memory limit; call before concurrent launches.
Status preload_mxfp4_expert_wgmma();

// The CTAs one SM holds of the default kernel at a pass width (8, 16, 32 or 48 rows; x by TMA) at
// the shared memory a PDL launch of `ctas` CTAs asks for over `sms` SMs (pdl_spread_smem_bytes),
// by the occupancy API: what the GPU test holds the spread to. Call after
// preload_mxfp4_expert_wgmma.
StatusOr<int> mxfp4_expert_wgmma_pdl_ctas_per_sm(ExpertGemmStage stage, int pass_rows, int ctas,
                                                 int sms);

// Fp8ExpertGemmArgs as for the FP8 kernels, with:
// - weights: the PackedMxfp4Expert::codes of all experts, expert e at e * weight_stride bytes;
// - weight_scales: the PackedMxfp4Expert::scales words of all experts reinterpreted as float (the
//   kernel reads their bits, never their values), expert e at e * scale_stride words;
// - tiles: 16-row tiles as in version 1, L1 I/8 (a multiple of 16), L2 H/16 (a multiple of 8);
// - chunks: K / 128;
// - DeepSeek semantics: requant RequantScale::kPow2, swiglu_limit 10, route_weights set.
// - x_rows: the rows the x buffer holds (the bound of the x tensor map; must be > 0, else the
//   launch is refused: every kernel loads x by TMA since version 5.14).
// Rows per pass 8 (hints up to 12, one pass), 16 (one pass up to 24), 32 (one pass up to 44) or
// 48 (one pass up to 72, then side by side, up to 8), in the kernel with feed warps
// (expert_pass_policy.h, kMxfp4PassBands); a pass with fewer rows than its width runs narrower
// WGMMAs (its rows rounded up to a multiple of 8). Programmatic dependent launch (overlap_previous
// / allow_overlap_next) as the FP8 version. work_counters: persistent CTAs (kernel with feed warps
// only; a persistent CTA lets the next kernel launch once it has taken its last item). Not
// supported (INVALID_ARGUMENT): fixed_expert.
Status launch_mxfp4_expert_wgmma(Fp8ExpertGemmArgs const& args, cudaStream_t stream);

// Configurations the tests and the benchmark force. The defaults are what
// launch_mxfp4_expert_wgmma(args, stream) runs. (Version 3's early release of a stage's weight
// images, measured 1-2% slower at every point, was removed in the twenty-third session:
// bench/NOTES.md.)
struct Mxfp4WgmmaTuning {
  // Benchmark probe only (outputs are not written): the consumers release every stage unread, so
  // the kernel measures its own weight stream without decode or MMA.
  bool stream_only = false;
  // Tests and the benchmark: a configuration forced instead of the pass policy's (0: the policy):
  // 8, 16, 32 or 48 rows per pass. Passes side by side: ceil(hint / rows), at most 8.
  int pass_rows = 0;
  // The benchmark: at most this many passes side by side (0: the policy's or the forced
  // configuration's count), to measure one pass per tile group against the policy's.
  int max_passes = 0;
};
Status launch_mxfp4_expert_wgmma(Fp8ExpertGemmArgs const& args, cudaStream_t stream,
                                 Mxfp4WgmmaTuning const& tuning);

}  // namespace gcmoe::kernels
