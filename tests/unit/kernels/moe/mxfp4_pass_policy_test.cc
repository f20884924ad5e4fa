// The MXFP4 expert GEMM's pass policy (kernels/moe/mxfp4_pass_policy.h): the width by the hint's
// band, passes enough to cover the hint up to the cap, every hint covered or looped.
#include "kernels/moe/mxfp4_pass_policy.h"

#include "kernels/moe/expert_rows_hint.h"
#include "tests/support/catch.h"

namespace gcmoe::kernels {
namespace {

TEST_CASE("MXFP4 pass policy: 8-row passes up to 20 rows, 16 up to 48, then 32") {
  struct Want {
    int hint, rows, passes;
  };
  for (Want const w :
       {Want{-3, 8, 1}, Want{0, 8, 1}, Want{1, 8, 1}, Want{8, 8, 1}, Want{9, 8, 2}, Want{20, 8, 3},
        Want{21, 16, 2}, Want{32, 16, 2}, Want{33, 16, 3}, Want{48, 16, 3}, Want{49, 32, 2},
        Want{64, 32, 2}, Want{65, 32, 3}, Want{256, 32, 8}, Want{100000, 32, 8}}) {
    Mxfp4Passes const p = mxfp4_passes_for(w.hint);
    INFO("hint " << w.hint);
    CHECK(p.rows == w.rows);
    CHECK(p.passes == w.passes);
  }
}

TEST_CASE("MXFP4 pass policy: side-by-side passes cover the hint unless capped") {
  for (int hint = 1; hint <= 400; ++hint) {
    Mxfp4Passes const p = mxfp4_passes_for(hint);
    INFO("hint " << hint);
    CHECK(p.passes >= 1);
    CHECK(p.passes <= kMxfp4MaxParallelPasses);
    // Covered in one go, or every pass CTA is in use and loops over the rest.
    CHECK((p.rows * p.passes >= hint || p.passes == kMxfp4MaxParallelPasses));
    // No pass CTA left without rows at the hint.
    CHECK(p.rows * (p.passes - 1) < hint);
  }
}

TEST_CASE("MXFP4 pass policy at the decode hints of DeepSeek-V4.1 (384 experts, top-6)") {
  // One GPU: T = 256 gives a mean of 4 rows, a hint of 11: two 8-row passes (v4.1's 1.45x point).
  CHECK(mxfp4_passes_for(routed_rows_hint(256, 6, 384)).rows == 8);
  // One rank of eight (48 local experts): T = 64 per rank (mean 8) stays on 8-row passes, T = 128
  // (mean 16) takes 16-row passes, T = 256 (mean 32) 32-row passes.
  CHECK(mxfp4_passes_for(routed_rows_hint(64 * 8, 6, 384)).rows == 8);
  CHECK(mxfp4_passes_for(routed_rows_hint(128 * 8, 6, 384)).rows == 16);
  CHECK(mxfp4_passes_for(routed_rows_hint(256 * 8, 6, 384)).rows == 32);
}

}  // namespace
}  // namespace gcmoe::kernels
