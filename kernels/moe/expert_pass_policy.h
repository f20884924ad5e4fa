#pragma once
// How an expert GEMM covers an expert's rows for a rows-per-expert hint: the pass width (token
// rows per WGMMA chain, a compile-time configuration of the kernel) and how many passes of it run
// side by side as separate CTAs per tile group (each streams the expert's weights; an expert with
// more rows than width × passes loops inside its CTAs). A plain policy, testable without a GPU;
// the launchers (fp8_expert_wgmma.cu, mxfp4_expert_wgmma.cu) follow it. What decides a band is
// the mean rows per expert — extra passes stream an expert's weights again only where it has the
// rows — against how many CTAs of the wider configuration an SM holds.

#include <climits>
#include <cstddef>
#include <span>

namespace gcmoe::kernels {

inline constexpr int kMaxParallelPasses = 8;

// Hints up to max_hint run passes `rows` wide, at most max_passes side by side (an expert with
// more rows loops inside its CTAs).
struct PassBand {
  int max_hint = 0;
  int rows = 0;
  int max_passes = kMaxParallelPasses;
};

// FP8 WGMMA (GLM-5.2, bench/NOTES.md "FP8 expert FFN"): 8 rows up to 8; 16 (two CTAs per SM) with
// passes side by side up to 32 (the extra pass re-reads the weight tiles from L2, which costs less
// than a 32-row configuration's one CTA per SM); 64 up to 64 (v2.4: where 3-6 parallel 16-row
// passes each re-read every tile, one 64-row pass does; one rank of eight, T=128: 549 -> 536 µs);
// 96 up to 96 (v2.7: one WGMMA per k-step, 5 stages); 128 beyond (v2.6: one weight stream per
// tile for up to 128 rows instead of two 64-row passes side by side).
inline constexpr PassBand kFp8PassBands[] = {{8, 8}, {32, 16}, {64, 64}, {96, 96}, {INT_MAX, 128}};

// FP8 WGMMA for one expert alone (the shared expert in launches of its own: fixed_expert), where
// the bands above leave most SMs idle (18 L1 and 40 L2 CTAs per pass at V4.1's shape): more,
// narrower passes side by side, each re-reading the weights from L2. bench_lone_expert, V4.1's
// shared expert on an H200 (bench/NOTES.md, "The lone expert"), µs, these bands / kFp8PassBands:
// T=16 31.1 / 33.7 (8 rows x 2), T=64 35.4 / 50.7 (16 x 4), T=128 49.2 / 86.1 (16 x 8), T=256 56.8
// / 86.7 (64 x 4); T <= 8 alike (31 µs: too few CTAs for any width, 25% of the copy rate).
inline constexpr PassBand kFp8LonePassBands[] = {{32, 8}, {128, 16}, {INT_MAX, 64}};
// MXFP4 (DeepSeek V4/V4.1, bench/NOTES.md "MXFP4 expert GEMM" v5.4, v5.5, v5.8, v5.16): 8 rows up
// to 12 (2 L1 / 4 L2 CTAs per SM) and 16 rows up to 24, then 32 rows, one pass per tile group up to
// 44, then 48 rows, one pass up to 72 and side by side beyond, all in the kernel with feed warps.
// One pass (v5.5): up to a hint about 1.5x the width the mean is at most about half of it, so a
// second pass side by side streams every expert's weights again for the few experts with more rows,
// which a single pass covers by looping. Since v5.8 a pass with fewer rows than its width runs a
// WGMMA, fold and token-scale pass trimmed to them (its rows rounded up to a multiple of 8), so a
// 32-row pass over an expert's 17-24 rows costs less than two 16-row passes and an expert's last,
// short pass costs less than a full one: one 32-row pass wins from hint 27 on (one rank of eight on
// an H200 at V4.1's shape, µs, 32-row one pass / the v5.5 bands: T=112 (hint 27) 297 / 311, T=128
// (29) 308 / 342, T=160 (35) 309 / 328; at T=96 (24) one 16-row pass 279 / 32-row 288). From hint
// 45 (v5.16), 48-row passes (a feed warpgroup that hands its registers to the consumers): most
// experts in one pass instead of the 32-row pass's second loop, which decodes, folds and streams an
// expert's weights again (one rank of eight, µs per round, 48-row one pass / 32-row passes side by
// side: T=224 (hint 45) 325-341 / 349-375, T=256 (50) 335-358 / 411-421 (402 looping), T=320 (60)
// 390-409 / 516-612 (641 looping); at hints 40-43 (T=192, 208) 32 and 48 rows tie; up to hint 70
// one 48-row pass is at or below two side by side). The producer-less kernel (v5), forced-only
// since the x rows came by TMA (v5.3), was removed with the windowed layout (v6).
inline constexpr PassBand kMxfp4PassBands[] = {
    {12, 8, 1}, {24, 16, 1}, {44, 32, 1}, {72, 48, 1}, {INT_MAX, 48}};

struct ExpertPasses {
  int rows = 8;    // pass width
  int passes = 1;  // side by side per tile group, 1..kMaxParallelPasses
};

// The K split of a lone expert's launch (fp8_expert_wgmma_kernel.cuh, expert_split_k.cuh): the
// fewest CTAs per (tile group, pass), up to max_splits, that give the launch at least one CTA per
// SM (`sms`), each keeping at least kMinChunksPerSplit K chunks. A CTA streams ~50-65 GB/s after
// a fixed ~5 µs (launch, the pipeline's fill, the epilogue), so fewer chunks cost more than they
// stream: V4.1's shared expert at T=1 on an H200 (bench/NOTES.md, "The lone expert", ncu), L1 µs
// by CTAs per (tile group, pass): 1 25.8, 2 15.7, 4 12.0 (10 chunks each), 6 13.2, 8 16.3 (5).
inline constexpr int kMinChunksPerSplit = 8;
int lone_expert_k_splits(int ctas, int chunks, int sms, int max_splits);

// Shared memory per SM on Hopper, bytes: 228 KB, of which each resident CTA takes 1 KB reserved
// besides its own (dynamic + static); one CTA may have at most 227 KB.
inline constexpr std::size_t kSmSharedBytes = 228 * 1024;
inline constexpr std::size_t kCtaReservedSharedBytes = 1024;
// The most dynamic shared memory an expert GEMM launch asks for (the configurations of more than
// one CTA per SM raise their limit to it): 227 KB less 2 KB for their static part (the MXFP4
// kernels' window tables and row factors since version 6: 1,472 bytes at the 16-row L1, whose
// limit at 226 KB the driver refused; the widest one-CTA FP8 configurations have more, and never
// spread).
inline constexpr std::size_t kMaxExpertGemmDynamicSmem = 225 * 1024;

// The dynamic shared memory for an expert GEMM launched by PDL (programmatic dependent launch),
// bytes. Such a grid is placed while the previous kernel still runs, and the block scheduler packs
// it up to min_blocks CTAs per SM onto the SMs with room: at one GPU T=1 the MXFP4 L2's 240 CTAs
// sat 4 per SM on 60 SMs and ran 20 µs after L1, against 11-16 µs spread over 132
// (bench/NOTES.md, "Why L2 by PDL loses at T=1"). Where the grid (`ctas`) needs fewer than
// min_blocks CTAs per SM over the `sms` its stream may use, the smem asked for (at least `smem`)
// leaves room for at most ceil(ctas / sms) per SM; elsewhere, or with sms < 1, it is `smem`.
std::size_t pdl_spread_smem_bytes(std::size_t smem, int ctas, int min_blocks, int sms);

// The band a hint falls in (hint < 1 counts as 1). bands: increasing max_hint, the last INT_MAX.
PassBand const& pass_band_for(int rows_per_expert_hint, std::span<PassBand const> bands);

// The band's width, and passes enough to cover the hint up to the band's max_passes.
ExpertPasses expert_passes_for(int rows_per_expert_hint, std::span<PassBand const> bands);

}  // namespace gcmoe::kernels
