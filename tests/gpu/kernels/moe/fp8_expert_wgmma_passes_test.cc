// FP8 expert FFN, WGMMA version: the wide passes (64/96/128 token rows per pass, WGMMA N trimmed
// to the rows present, passes side by side or looping inside a CTA) and the token-ring readiness
// wait, against the CPU reference (tests/gpu/kernels/moe/fp8_expert_ffn_case.h).
#include "kernels/moe/fp8_expert_wgmma.h"
#include "tests/gpu/kernels/moe/fp8_expert_ffn_case.h"
#include "tests/support/catch.h"

namespace gcmoe::kernels {
namespace {

using fp8_ffn_test::Case;
using fp8_ffn_test::kBound;
using fp8_ffn_test::Kernel;
using fp8_ffn_test::run_case;

TEST_CASE("fp8 expert FFN (WGMMA): 64-row passes side by side, H a multiple of 128 only") {
  Case c;
  c.kernel = Kernel::kWgmma;
  c.hidden = 384;
  c.inter = 256;
  c.experts = 3;
  c.tokens = 150;
  c.top_k = 2;
  c.rows_hint = 40;  // one 64-row pass per tile group for 150 rows: the CTAs loop thrice
  c.all_to_expert_zero = true;
  c.seed = 17;
  CHECK(run_case(c) < kBound);
}

TEST_CASE("fp8 expert FFN (WGMMA): wide hints run 64-row passes side by side") {
  Case c;
  c.kernel = Kernel::kWgmma;
  c.hidden = 512;
  c.inter = 256;
  c.experts = 4;
  c.tokens = GENERATE(50, 100, 300);  // one 64-row pass; one and three 128-row passes (v2.6)
  c.top_k = 2;
  c.all_to_expert_zero = true;
  c.deepseek_semantics = c.tokens == 100;
  c.seed = 19 + static_cast<std::uint64_t>(c.tokens);
  CHECK(run_case(c) < kBound);
}

// The wide configurations' regime (GLM-5.2, one rank of eight at T=128/256: 16–85 rows per
// expert): every token to every expert gives each exactly `tokens` rows, the hint exact (33 and
// 65: one row past the 16-row configuration and past one 64-row pass; 65–128 run the 128-row
// kernel since v2.6).
TEST_CASE("fp8 expert FFN (WGMMA): 33 to 128 rows per expert in 64- and 128-row passes") {
  Case c;
  c.kernel = Kernel::kWgmma;
  c.hidden = 1024;
  c.inter = 512;
  c.experts = 3;
  c.top_k = 3;
  c.tokens = GENERATE(33, 48, 64, 65, 96, 128);
  c.tma_x = GENERATE(true, false);  // 96-row passes: x by TMA (v2.20) or cp.async
  c.deepseek_semantics = c.tokens == 96;
  c.seed = 41 + static_cast<std::uint64_t>(c.tokens);
  CHECK(run_case(c) < kBound);
}

// Ragged segments (4 experts, about 50 rows each, 50–54 on the fullest) under a hint above the
// rows (72: two 64-row passes side by side, the second pass's CTAs exit) and below them (40).
TEST_CASE("fp8 expert FFN (WGMMA): ragged 64-row passes, hint above and below the rows") {
  Case c;
  c.kernel = Kernel::kWgmma;
  c.hidden = 768;
  c.inter = 384;
  c.experts = 4;
  c.top_k = 2;
  c.tokens = 100;
  c.rows_hint = GENERATE(72, 40);
  c.seed = 43 + static_cast<std::uint64_t>(c.rows_hint);
  CHECK(run_case(c) < kBound);
}

// v2.6: a 64-row pass trims its WGMMA to the rows present, rounded up to 16 (N = 16, 32, 48, 64):
// one expert per width in one launch (5 and 17 rows: widths 16 and 32 with zero-filled rows).
TEST_CASE("fp8 expert FFN (WGMMA): 64-row passes trimmed to 16, 32, 48 and 64 columns") {
  Case c;
  c.kernel = Kernel::kWgmma;
  c.hidden = 512;
  c.inter = 256;
  c.experts = 6;
  c.tokens = 64;
  c.expert_rows = {5, 17, 32, 33, 49, 64};
  c.rows_hint = 64;
  c.deepseek_semantics = GENERATE(false, true);
  c.seed = c.deepseek_semantics ? 61 : 59;
  CHECK(run_case(c) < kBound);
}

// v2.6: hints above 64 run 96- or 128-row passes (two 64-row halves on one weight stage, side by
// side at 96 and one after the other at 128): every pair of half widths in one launch — (16, 0)
// .. (64, 0), (64, 16) .. (64, 64); under hint 96 the 113 and 128 rows take a second pass.
TEST_CASE("fp8 expert FFN (WGMMA): 96- and 128-row passes at every half width") {
  Case c;
  c.kernel = Kernel::kWgmma;
  c.hidden = 768;
  c.inter = 384;
  c.experts = 8;
  c.tokens = 128;
  c.expert_rows = {10, 40, 64, 65, 81, 100, 113, 128};
  c.rows_hint = GENERATE(96, 128);
  c.deepseek_semantics = GENERATE(false, true);
  c.seed = (c.deepseek_semantics ? 67 : 71) + static_cast<std::uint64_t>(c.rows_hint);
  CHECK(run_case(c) < kBound);
}

// v2.7: 64- and 96-row passes run one WGMMA per k-step over the rows rounded up to 8 (N = 8, 16,
// 24 .. 96), in L1 and L2: one expert per width, zero-filled rows inside the width, in one launch
// per hint (64: the 64-row pass; 96: the 96-row one).
TEST_CASE("fp8 expert FFN (WGMMA): 64- and 96-row passes trimmed in steps of 8") {
  Case c;
  c.kernel = Kernel::kWgmma;
  c.hidden = 512;
  c.inter = 256;
  c.experts = 10;
  c.tokens = 96;
  c.expert_rows = GENERATE(std::vector<int>{1, 8, 9, 23, 40, 47, 56, 57, 63, 64},
                           std::vector<int>{3, 12, 29, 44, 61, 66, 77, 88, 90, 96});
  c.rows_hint = c.expert_rows.back();
  c.deepseek_semantics = GENERATE(false, true);
  c.seed = (c.deepseek_semantics ? 79 : 83) + static_cast<std::uint64_t>(c.rows_hint);
  CHECK(run_case(c) < kBound);
}

// More rows than the hint: the 96/128-row CTAs loop over passes (hint 100: one CTA per tile group
// runs 150 rows as 128 + 22 and 300 as 128 + 128 + 44, reusing its stages across passes; hint 90:
// 96-row passes), and side by side (hint 200: two CTAs per tile group, 300 rows as 128 + 128
// then 44).
TEST_CASE("fp8 expert FFN (WGMMA): 96- and 128-row passes looping inside the CTAs") {
  Case c;
  c.kernel = Kernel::kWgmma;
  c.hidden = 512;
  c.inter = 256;
  c.experts = 3;
  c.tokens = 300;
  c.expert_rows = {150, 300, 7};
  c.rows_hint = GENERATE(90, 100, 200);
  c.seed = 73 + static_cast<std::uint64_t>(c.rows_hint);
  CHECK(run_case(c) < kBound);
}

// v2.8: in the 96-row passes each warp refills its share of a stage while its WGMMAs run. At H 6144
// (48 L1 chunks on 5 stages, 8 L2 chunks on 3) every stage is refilled many times and the barrier
// phases wrap; the small shapes above refill at most once. Widths 24 and 80 of the 96-row pass
// (hint 96), and 96 + 50 rows looping in one CTA (hint 90 with 146 rows).
TEST_CASE("fp8 expert FFN (WGMMA): 96-row passes over many chunks (H 6144)") {
  Case c;
  c.kernel = Kernel::kWgmma;
  c.hidden = 6144;
  c.inter = 1024;
  c.experts = 2;
  c.expert_rows = GENERATE(std::vector<int>{23, 77}, std::vector<int>{146, 5});
  c.tokens = c.expert_rows[0] == 146 ? 146 : 77;
  c.rows_hint = c.expert_rows[0] == 146 ? 90 : 96;
  c.deepseek_semantics = c.expert_rows[0] == 146;
  c.seed = 89 + static_cast<std::uint64_t>(c.expert_rows[0]);
  CHECK(run_case(c) < kBound);
}

// One fixed expert (the shared expert alone) with its K chunks split over a cluster of CTAs per
// (tile group, pass), CTA 0 summing the partial accumulators: every split count up to the chunks
// (H 1024: 8 L1 chunks, I 512: 4 L2 chunks), 8-row passes side by side (T <= 32) and 16-row ones
// (T = 40), against the reference.
TEST_CASE("fp8 expert FFN (WGMMA): a fixed expert with its K split over a cluster") {
  Case c;
  c.kernel = Kernel::kWgmma;
  c.hidden = 1024;
  c.inter = 512;
  c.experts = 1;
  c.fixed_expert = true;
  c.tokens = GENERATE(1, 7, 16, 29, 40);
  c.expert_rows = {c.tokens};
  c.k_splits = GENERATE(1, 2, 3, 4);
  c.deepseek_semantics = c.tokens % 2 == 1;
  c.seed = 97 + static_cast<std::uint64_t>(c.tokens * 8 + c.k_splits);
  CHECK(run_case(c) < kBound);
}

// The policy's split at V4.1's shared-expert shape (H 5120: 40 L1 chunks, I 2304: 18 L2 chunks):
// on an H200 5 L1 and 2 L2 CTAs per (tile group, pass) at T = 1, 2 and 1 at T = 32.
TEST_CASE("fp8 expert FFN (WGMMA): the shared expert alone at V4.1's shape, split by the policy") {
  Case c;
  c.kernel = Kernel::kWgmma;
  c.hidden = 5120;
  c.inter = 2304;
  c.experts = 1;
  c.fixed_expert = true;
  c.tokens = GENERATE(1, 32);
  c.expert_rows = {c.tokens};
  c.deepseek_semantics = true;
  c.seed = 131 + static_cast<std::uint64_t>(c.tokens);
  CHECK(run_case(c) < kBound);
}

// L2 launched by PDL acquires each pass's rows from the last of L1's tile groups
// (ExpertRowsHandshake) instead of waiting for the whole L1 grid, three pairs in a row with h
// poisoned before each: hints 3, 20 and 30 (8-, 16- and 32-row passes with feed warps), 50, 80 and
// 150 (the wide kernel's 64-, 96- and 128-row passes; 150 loops), at GLM-5.2's shape (16 L1 tile
// groups arriving per pass), and a fixed expert with its K split over a cluster (CTA 0 arrives).
TEST_CASE("fp8 expert FFN (WGMMA): L2 acquires L1's rows through the rows handshake") {
  Case c;
  c.kernel = Kernel::kWgmma;
  c.order = testing::PairOrder::kByRows;
  int const shape = GENERATE(0, 1, 2);
  if (shape == 0) {
    c.hidden = 512;
    c.inter = 512;
    c.experts = 3;
    c.tokens = GENERATE(3, 20, 30, 50, 80, 150);
    c.expert_rows = {c.tokens, c.tokens / 2, 1};
  } else if (shape == 1) {
    c.hidden = 6144;
    c.inter = 2048;
    c.experts = 2;
    c.tokens = GENERATE(8, 90);
    c.expert_rows = {c.tokens, c.tokens / 3};
  } else {
    c.hidden = 1024;
    c.inter = 512;
    c.experts = 1;
    c.fixed_expert = true;
    c.tokens = 7;
    c.expert_rows = {c.tokens};
    c.k_splits = 3;
  }
  c.deepseek_semantics = c.tokens % 2 == 1;
  c.seed = 151 + static_cast<std::uint64_t>(c.tokens + 1000 * shape);
  CHECK(run_case(c) < kBound);
}

// An L2 by rows whose L1 never releases them (launched without rows_done) gives up at its 1 ms
// deadline with the error flag raised (DEADLINE_EXCEEDED from the handshake), not a hang: the
// policy's 16-row passes with feed warps (T = 20) and the wide kernel's 96-row ones (T = 80).
TEST_CASE("fp8 expert FFN (WGMMA): an L2 by rows whose L1 never releases them ends in an error") {
  Case c;
  c.kernel = Kernel::kWgmma;
  c.order = testing::PairOrder::kByRowsNeverReleased;
  c.hidden = 512;
  c.inter = 512;
  c.experts = 2;
  c.tokens = GENERATE(20, 80);
  c.expert_rows = {c.tokens, c.tokens / 2};
  c.seed = 171 + static_cast<std::uint64_t>(c.tokens);
  run_case(c);
}

TEST_CASE("fp8 expert FFN (WGMMA) waits on the token ring's readiness counters") {
  Case c;
  c.kernel = Kernel::kWgmma;
  c.hidden = 512;
  c.inter = 256;
  c.experts = 4;
  c.tokens = 20;
  c.top_k = 2;
  c.seed = 23;
  c.ready = GENERATE(Case::Ready::kLate, Case::Ready::kNever);
  // 20: the 16-row kernel's producer warp waits; 40, 80, 100: the 64/96/128-row kernel's warp 0.
  c.rows_hint = GENERATE(20, 40, 80, 100);
  c.tma_x = GENERATE(true, false);  // the 16-row kernel's x warp: TMA after the wait, or cp.async
  CHECK(run_case(c) < kBound);
}

}  // namespace
}  // namespace gcmoe::kernels
