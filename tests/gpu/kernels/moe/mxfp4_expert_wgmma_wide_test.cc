// MXFP4 expert FFN on the GPU, the producer-less kernel (kernels/moe/mxfp4_expert_wgmma_wide.cuh,
// forced through Mxfp4WgmmaTuning::wide) against the CPU reference (mxfp4_expert_ffn_case.h).
#include <cstdint>

#include "kernels/moe/mxfp4_expert_wgmma.h"
#include "tests/gpu/kernels/moe/mxfp4_expert_ffn_case.h"
#include "tests/support/catch.h"

namespace gcmoe::kernels {
namespace {

using mxfp4_ffn_test::Case;
using mxfp4_ffn_test::check;
using mxfp4_ffn_test::Scales;

// Version 5's producer-less kernel, forced: 32- and 64-row passes over experts of ~6, ~22 and ~75
// rows; hint T runs ceil(T / rows) passes side by side, hint 16 one pass per tile group, so an
// expert with more rows loops over passes inside its CTAs (the stage uses carry across passes);
// the 45-token batch waits on late readiness counters.
TEST_CASE(
    "mxfp4 expert FFN: the producer-less kernel's 32- and 64-row passes match the reference") {
  Case c;
  c.hidden = 512;
  c.inter = 256;
  c.experts = 4;
  c.tokens = GENERATE(12, 45, 150);
  c.top_k = 2;
  c.scales = Scales::kExtreme;
  c.late_rows = c.tokens == 45;
  c.rows_hint = GENERATE(0, 16);
  c.tuning.wide = true;
  c.tuning.pass_rows = GENERATE(32, 64);
  c.seed = 61 + static_cast<std::uint64_t>(c.tokens);
  check(c);
}

TEST_CASE("mxfp4 expert FFN: the producer-less kernel at V4.1's expert shape") {
  Case c;
  c.hidden = 5120;
  c.inter = 2304;
  c.experts = 4;
  c.tokens = 70;  // ~35 rows per expert: both halves of a 64-row pass in use
  c.top_k = 2;
  c.scales = Scales::kRealistic;
  c.tuning.wide = true;
  c.tuning.pass_rows = 64;
  c.seed = 67;
  check(c);
}

}  // namespace
}  // namespace gcmoe::kernels
