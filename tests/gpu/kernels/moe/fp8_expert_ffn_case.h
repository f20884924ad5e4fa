#pragma once
// The FP8 expert FFN GPU tests' case: random FP8 experts (128×128 f32 scales) and a routed batch,
// run through one kernel version (mma.sync or WGMMA) and compared with the CPU reference
// kernels/moe/expert_ffn_ref.h; run_case returns the relative L2 error (and checks it).

#include <cstdint>
#include <vector>

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
  std::uint64_t seed = 0;
};

// Runs the case; prints and returns the relative L2 error against the CPU reference.
double run_case(Case const& c);

// FP8 requantization of h can round a few elements one e4m3 step differently than the CPU (their
// fp32 sums differ in order), and y is bf16: 1e-2 leaves room for that and catches any real bug
// (a wrong scale, tile or fragment gives errors of order 1).
inline constexpr double kBound = 1e-2;

}  // namespace gcmoe::kernels::fp8_ffn_test
