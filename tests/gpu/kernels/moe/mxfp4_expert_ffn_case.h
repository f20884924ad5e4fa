#pragma once
// The MXFP4 expert FFN GPU tests' case (kernels/moe/mxfp4_expert_wgmma.h): random MXFP4 experts
// with e8m0 bytes drawn one of three ways and a routed batch, run through the launcher with a
// tuning, compared with the CPU reference kernels/moe/expert_ffn_ref.h on the dequantized weights
// with the kDeepseekUe8m0 activation recipe.

#include <cstdint>

#include "kernels/moe/mxfp4_expert_wgmma.h"

namespace gcmoe::kernels::mxfp4_ffn_test {

// How the e8m0 bytes are drawn.
enum class Scales {
  kRealistic,  // per 32-block bytes 116..122 (2^-11..2^-5): checkpoint-like
  kNarrowMax,  // per row a base, blocks base - 11 .. base
  kExtreme,    // blocks of a chunk base, base - 5, base - 12, base - 20, base - 40 mixed;
               // down rows' bases anywhere in 67..167 (2^-60..2^+40)
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
  bool tma_x = true;        // false: x_rows 0, the kernel copies x with cp.async
};

struct Errors {
  double rel_l2 = 0.0;
  double feature_normalized = 0.0;  // rel-L2 with each output feature over its row's scale
};

// Runs the case; prints and returns its errors against the CPU reference.
Errors run_case(Case const& c);

// The kernel multiplies exactly the dequantized weights (every e2m1 value times 2^-6 is an e4m3
// number; each k-step's scale is an exact power-of-two f32 factor) and the
// reference's FP8 activations; what differs is the fp32 summation order, which can move an h
// element across an e4m3 rounding boundary, and y's bf16 rounding (2^-9 relative). 1e-2 (as
// for FP8) leaves room for that and catches any real bug (a wrong scale, nibble or fragment gives
// errors of order 1), also with every output feature normalized by its row's scale.
inline constexpr double kBound = 1e-2;

// Runs the case and checks both errors against kBound.
void check(Case const& c);

}  // namespace gcmoe::kernels::mxfp4_ffn_test
