#pragma once
// How the MXFP4 expert GEMM (mxfp4_expert_wgmma.h) covers an expert's rows for a rows-per-expert
// hint: the pass width (token rows per WGMMA chain, a compile-time configuration) and how many
// passes of it run side by side as separate CTAs per tile group (each streams the expert's
// weights; an expert with more rows than width × passes loops). A plain policy, testable without
// a GPU; the launch follows it.
//
// Up to 20 rows: 8-row passes (2 L1 / 4 L2 CTAs per SM; an expert with 9-20 rows streams its
// weights 2-3 times); up to 48: 16-row passes (2 L1 CTAs per SM at the 56-register cap, 3 L2
// CTAs); above: 32-row passes (1 L1 / 2 L2 CTAs per SM). What decides is the mean rows per expert
// (extra passes stream an expert's weights again only where it has the rows) against how many
// CTAs an SM holds. Measured on an H200 at V4.1's shape (bench/NOTES.md, MXFP4 v4.1 and v4.2):
// 8-row passes beat v4's one-L1-CTA-per-SM 16-row configuration by 1.21-1.45x where it ran and
// 32-row passes by 1.20x at ep8_rank T=64 (mean 8 rows); at T=128 (mean 16) 8-row passes lose 6%
// and two-CTA 16-row passes win 1.18x over 32-row ones.

namespace gcmoe::kernels {

inline constexpr int kMxfp4EightRowLimit = 20;
inline constexpr int kMxfp4SixteenRowLimit = 48;
inline constexpr int kMxfp4MaxParallelPasses = 8;

struct Mxfp4Passes {
  int rows = 8;    // pass width: 8, 16 or 32 token rows
  int passes = 1;  // side by side per tile group, 1..kMxfp4MaxParallelPasses
};

// hint < 1 counts as 1.
Mxfp4Passes mxfp4_passes_for(int rows_per_expert_hint);

}  // namespace gcmoe::kernels
