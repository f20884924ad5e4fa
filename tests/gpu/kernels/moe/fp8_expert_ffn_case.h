#pragma once
// The FP8 expert FFN GPU tests' case: random FP8 experts (128×128 f32 scales) and a routed batch,
// run through one kernel version (mma.sync or WGMMA) and compared with the CPU reference
// kernels/moe/expert_ffn_ref.h in stages (the requantized h element by element, then the down GEMM
// from the kernel's own h) and end to end; run_case checks h and the end-to-end bound and returns
// the down GEMM's relative L2 error.

#include <cstdint>
#include <vector>

#include "tests/gpu/kernels/moe/expert_ffn_slots.h"

namespace gcmoe::kernels::fp8_ffn_test {

enum class Kernel { kMmaSync, kWgmma };

char const* kernel_name(Kernel kernel);

struct Case {
  Kernel kernel = Kernel::kMmaSync;
  std::int64_t hidden = 0;
  std::int64_t inter = 0;
  int experts = 0;
  int tokens = 0;
  int top_k = 0;
  bool all_to_expert_zero = false;  // skew: every token's first choice is expert 0
  bool deepseek_semantics = false;  // clamp 10, weight before down, pow2 activation scales
  int rows_hint = 0;                // kernel configuration hint; 0: the token count
  // Exact rows per expert (empty: random top_k routing): expert e gets expert_rows[e] distinct
  // tokens of a shuffled order; tokens must be at least the largest count.
  std::vector<int> expert_rows;
  // WGMMA token-ring readiness: counters set 50 ms after L1 starts (it must wait), or never (it
  // must end with its error flag raised, not hang).
  enum class Ready { kNoCounters, kLate, kNever } ready = Ready::kNoCounters;
  // The WGMMA kernel with feed warps (up to 32 rows per pass) loads the x rows by TMA when the
  // launch gives x_rows; false: x_rows 0, the cp.async path.
  bool tma_x = true;
  // WGMMA only: the launches name expert 0 as a fixed expert over rows [0, rows) (the shared
  // expert alone; experts must be 1), with the K split forced to k_splits (0: the policy's).
  bool fixed_expert = false;
  int k_splits = 0;
  // WGMMA only: how L2 follows L1 (tests/gpu/kernels/moe/expert_ffn_slots.h); with
  // kByRowsNeverReleased the case checks only that L2 gave up with its error flag.
  testing::PairOrder order = testing::PairOrder::kStream;
  std::uint64_t seed = 0;
};

// Runs the case; prints its errors, checks the requantized h (tests/support/requant_check.h, within
// kRequantTolerance × (|value| + the group's amax)) and the end-to-end error (kEndToEndBound), and
// returns the down GEMM's relative L2 error against its reference from the kernel's h.
double run_case(Case const& c);

// The kernel's accumulation (the FP8 tensor core's, about 2^-14 of the size of the terms, and the
// fp32 order) can move an h element across an e4m3 rounding midpoint: one step (6-12%) on that
// element, legitimately, which end to end reaches ~1e-2 when it hits a row's largest element (the
// MXFP4 tests measured that, bench/NOTES.md MXFP4 v5.8). So h is checked element by element and
// the down GEMM from the kernel's own h against kBound; y is bf16: 1e-2 leaves room for that and
// catches any real bug (a wrong scale, tile or fragment gives errors of order 1).
// These kernels chain four k-steps (128 products) per scale block inside the tensor core; the GPU
// tests measured deviations up to 3.6e-4 (MXFP4 since version 6 the same on its windowed tiles,
// mxfp4_expert_ffn_case.h).
inline constexpr double kRequantTolerance = 1e-3;
inline constexpr double kEndToEndBound = 5e-2;
inline constexpr double kBound = 1e-2;

}  // namespace gcmoe::kernels::fp8_ffn_test
