#pragma once
// The MXFP4 expert FFN GPU tests' case (kernels/moe/mxfp4_expert_wgmma.h): random MXFP4 experts
// with e8m0 bytes drawn one of three ways and a routed batch, run through the launcher with a
// tuning, compared with the CPU reference kernels/moe/expert_ffn_ref.h on the dequantized weights
// with the kDeepseekUe8m0 activation recipe: end to end and in stages (the requantized h, then
// the down GEMM from the kernel's own h).

#include <cstdint>

#include "kernels/moe/mxfp4_expert_wgmma.h"
#include "tests/gpu/kernels/moe/expert_ffn_slots.h"
#include "tests/support/requant_check.h"

namespace gcmoe::kernels::mxfp4_ffn_test {

// How the e8m0 bytes are drawn.
enum class Scales {
  kRealistic,  // per 32-block bytes 116..122 (2^-11..2^-5): checkpoint-like
  kNarrowMax,  // per row a base, blocks base - 11 .. base
  kExtreme,    // blocks of a chunk base, base - 5, base - 12, base - 20, base - 40 mixed;
               // down rows' bases anywhere in 67..167 (2^-60..2^+40)
  kMixed,      // the 64-row tiles in turn realistic (windowed) and extreme (fallback): one L1 CTA
               // (four tiles) runs both decodes side by side
};

char const* scales_name(Scales s);

struct Case {
  std::int64_t hidden = 0;
  std::int64_t inter = 0;
  int experts = 0;
  int tokens = 0;
  int top_k = 0;
  Scales scales = Scales::kRealistic;
  bool late_rows = false;  // readiness counters set 50 ms after L1 starts
  int rows_hint = 0;       // 0: the token count
  std::uint64_t seed = 0;
  Mxfp4WgmmaTuning tuning;  // the default unless a test sweeps it
  // How L2 follows L1 (tests/gpu/kernels/moe/expert_ffn_slots.h; not kByRowsNeverReleased: the
  // case checks y).
  testing::PairOrder order = testing::PairOrder::kStream;
  // Persistent CTAs (Fp8ExpertGemmArgs::work_counters): L1 and L2 each given zeroed counters,
  // which must read zero again after the run (the grid's last CTA resets them).
  bool persistent = false;
};

struct Errors {
  // End to end: y against the whole reference.
  double rel_l2 = 0.0;
  double feature_normalized = 0.0;  // rel-L2 with each output feature over its row's scale
  // In stages (expert_ffn_slots.h, staged_reference): the kernel's requantized h element by
  // element, and y against the down reference computed from that h.
  testing::RequantCheck h;
  double down_rel_l2 = 0.0;
  double down_feature_normalized = 0.0;
};

// Runs the case; prints and returns its errors against the CPU reference.
Errors run_case(Case const& c);

// The kernel multiplies exactly the dequantized weights (every e2m1 value times 2^-6 is an e4m3
// number; each k-step's scale is an exact power-of-two f32 factor) and the reference's FP8
// activations; what differs is the accumulation (the FP8 tensor core's, about 2^-14 of the size
// of the terms, and the fp32 order) and y's bf16 rounding (2^-9 relative). The accumulation can
// move an h element across an e4m3 rounding midpoint: one step (6-12%) on that element,
// legitimately. So h is checked element by element, each code the rounding of its exact value
// moved by at most kRequantTolerance × (|value| + the group's amax) (tests/support/
// requant_check.h), and the down GEMM against its reference from the kernel's own h within
// kBound. Version 6's windowed tiles chain a chunk's four k-steps (128 products) inside the tensor
// core, as the FP8 kernels do, where version 4's decode (the fallback tiles) chained one (32):
// deviations up to 3.6e-4 against 4.8e-5 (803 cases, about 2^-14) before, so the tolerance is
// FP8's (fp8_expert_ffn_case.h), 1e-3, where it was 2.5e-4 (bench/NOTES.md, twenty-ninth
// session). kBound, 1e-2 (as for FP8), leaves room for the bf16 rounding and catches any real bug
// (a wrong scale, nibble or fragment gives errors of order 1), also with every output feature
// normalized by its row's scale. End to end, a flip on a row's largest h element reaches 1.2e-2
// over the whole output (3 data sets of 360 at T = 27-45, bench/NOTES.md MXFP4 v5.8):
// kEndToEndBound only catches gross errors there.
inline constexpr double kRequantTolerance = 1e-3;
inline constexpr double kBound = 1e-2;
inline constexpr double kEndToEndBound = 5e-2;

// Runs the case and checks h, the down GEMM and the end-to-end errors against their bounds.
void check(Case const& c);

}  // namespace gcmoe::kernels::mxfp4_ffn_test
