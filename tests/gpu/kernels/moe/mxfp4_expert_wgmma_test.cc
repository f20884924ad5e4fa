// MXFP4 expert FFN on the GPU (kernels/moe/mxfp4_expert_wgmma.h: L1 gate/up + DeepSeek SwiGLU
// clamp + routing weight + pow2 FP8 requantization, then L2 down to bf16), the kernel with feed
// warps, against the CPU reference (mxfp4_expert_ffn_case.h) on random routed batches: small shapes
// and DeepSeek's expert shapes (V4.1-Flash H 5120, I 2304; V4-Flash H 4096, I 2048), realistic and
// extreme e8m0 bytes; persistent CTAs; and the arguments the launcher refuses.
#include "kernels/moe/mxfp4_expert_wgmma.h"

#include <cstdint>

#include "tests/gpu/kernels/moe/mxfp4_expert_ffn_case.h"
#include "tests/support/catch.h"

namespace gcmoe::kernels {
namespace {

using mxfp4_ffn_test::Case;
using mxfp4_ffn_test::check;
using mxfp4_ffn_test::Scales;

TEST_CASE("mxfp4 expert FFN matches the CPU reference at small shapes") {
  Case c;
  c.hidden = 256;
  c.inter = 128;
  c.experts = 6;
  c.tokens = GENERATE(1, 5, 24);
  c.top_k = 2;
  c.scales = GENERATE(Scales::kRealistic, Scales::kNarrowMax, Scales::kExtreme, Scales::kMixed);
  c.seed = 100 + static_cast<std::uint64_t>(c.tokens);
  check(c);
}

// Hint T (12, 45, 150): the policy's one 8-row pass (T = 12: experts with more than 8 rows loop)
// or 32-row passes side by side (x by TMA), and the kernel forced at 16, 32 and 48 rows (a feed
// warpgroup, setmaxnreg) for every hint (ceil(T / rows) passes side by side); each also capped at
// one pass (the benchmark's one-pass column: every expert loops over its rows in one CTA per tile
// group).
TEST_CASE("mxfp4 expert FFN: skewed experts take wider passes, side by side") {
  Case c;
  c.hidden = 512;
  c.inter = 256;
  c.experts = 4;
  c.tokens = GENERATE(12, 45, 150);
  c.top_k = 2;
  c.scales = Scales::kMixed;  // both decodes (windowed and fallback tiles)
  c.tuning.pass_rows = GENERATE(0, 16, 32, 48);
  c.tuning.max_passes = GENERATE(0, 1);
  c.seed = 17 + static_cast<std::uint64_t>(c.tokens);
  check(c);
}

// Passes with fewer rows than their width run a WGMMA, fold and token-scale pass trimmed to the
// rows rounded up to a multiple of 8 (v5.8). top_k = experts routes every token to every expert,
// so each expert has exactly T rows: in 32-row passes T = 3, 11, 20, 27 run 8, 16, 24 and 32
// columns, T = 38 a full pass then 8, T = 45 a full pass then 16; in 48-row passes T = 3 ... 45
// run 8, 16, 24, 32, 40 and 48 columns and T = 53 a full pass then 8; in 16-row passes T = 3 runs
// 8 columns and T = 20 a full pass then 8.
TEST_CASE("mxfp4 expert FFN: passes narrower than their width match the reference") {
  Case c;
  c.hidden = 512;
  c.inter = 256;
  c.experts = 2;
  c.top_k = 2;
  c.tokens = GENERATE(3, 11, 20, 27, 38, 45, 53);
  c.tuning.pass_rows = GENERATE(16, 32, 48);
  c.tuning.max_passes = 1;    // one CTA per tile group loops over the expert's passes
  c.scales = Scales::kMixed;  // both decodes (windowed and fallback tiles)
  c.seed = 53 + static_cast<std::uint64_t>(c.tokens);
  check(c);
}

// Many CTAs over many stages (300 experts, 800 rows; most tile groups run more CTAs than there
// are SM slots) match the reference, with 8-row passes (hint 8, experts with more rows take more
// passes in one CTA), 16-row passes (hint 16: the L1 with one WGMMA in flight) or 32-row passes
// side by side (hint = T).
TEST_CASE("mxfp4 expert FFN: many CTAs over many stages match the reference") {
  Case c;
  c.hidden = 512;
  c.inter = 256;
  c.experts = 300;
  c.tokens = 200;
  c.top_k = 4;
  c.scales = Scales::kRealistic;
  c.rows_hint = GENERATE(8, 16, 0);  // 8 / 16: those kernels; 0: the token count (32-row passes)
  c.seed = 41;
  check(c);
}

// Odd K chunk counts, fewer and more than the stages: H 384 and I 640 (3 and 5 chunks), H 1664
// and I 896 (13 and 7 chunks: not a multiple of any kernel's 4, 5 or 6 stages where more).
// Every pass starts its ring at stage 0 (v5.14), so a CTA looping over passes (max_passes 1;
// T = 45: 6, 3 or 2 passes) takes some stages once more per pass than others, and each stage's
// phase parity must follow its own uses; side by side (max_passes 0) as the policy runs them.
TEST_CASE("mxfp4 expert FFN: odd chunk counts") {
  Case c;
  bool const long_k = GENERATE(false, true);
  c.hidden = long_k ? 1664 : 384;
  c.inter = long_k ? 896 : 640;
  c.experts = 3;
  c.top_k = 3;
  c.tokens = GENERATE(20, 45);
  c.tuning.pass_rows = GENERATE(8, 16, 32, 48);
  c.tuning.max_passes = GENERATE(0, 1);
  c.scales = Scales::kRealistic;
  c.seed = 61 + static_cast<std::uint64_t>(c.tokens);
  check(c);
}

// The 48-row kernels at V4.1's shape (L1: 18 CTAs of 640 threads per expert, the feed warpgroup
// at 64 registers and the consumers at 104; L2: feed 48, consumers 96; feed_register_split.h):
// one pass of 40 or 48 columns per expert,
// or looping (T = 100: ~50 rows per expert, a full pass then a narrow one).
TEST_CASE("mxfp4 expert FFN: 48-row passes at V4.1's shape") {
  Case c;
  c.hidden = 5120;
  c.inter = 2304;
  c.experts = 4;
  c.tokens = GENERATE(40, 100);
  c.top_k = 2;
  c.tuning.pass_rows = 48;
  c.tuning.max_passes = GENERATE(0, 1);
  c.scales = Scales::kRealistic;
  c.seed = 83 + static_cast<std::uint64_t>(c.tokens);
  check(c);
}

// Persistent CTAs (work_counters; expert_work_queue.cuh): one CTA per SM slot takes the (expert,
// tile group, pass) items in turn, its stage ring carried across them. Many experts (more items
// than CTAs: every CTA runs several, of different widths), each pass width the policy runs (hints
// 8, 16, 45 and the token count: 8-, 16-, 32- and 48-row passes, side by side beyond their
// width), odd chunk counts (H 384, I 640: 3 and 5 chunks, fewer than the stages, so one CTA runs
// items back to back from stage 0), and the counters zero again after each grid.
TEST_CASE("mxfp4 expert FFN: persistent CTAs take the work items in turn") {
  Case c;
  bool const odd_k = GENERATE(false, true);
  c.hidden = odd_k ? 384 : 512;
  c.inter = odd_k ? 640 : 256;
  c.experts = odd_k ? 40 : 300;
  c.tokens = 200;
  c.top_k = 4;
  c.scales = Scales::kMixed;  // both decodes (windowed and fallback tiles)
  c.rows_hint = GENERATE(8, 16, 45, 0);
  c.persistent = true;
  c.seed = 91 + static_cast<std::uint64_t>(c.rows_hint);
  check(c);
}

// Persistent L1 and L2 where L2 comes by PDL and acquires L1's rows through the rows handshake,
// three pairs in a row on the same counters (each grid must find them reset by the one before),
// at V4.1's shape (18 L1 tile groups per expert) and with late readiness counters.
TEST_CASE("mxfp4 expert FFN: persistent CTAs under the rows handshake and readiness counters") {
  Case c;
  bool const late = GENERATE(false, true);
  c.hidden = 5120;
  c.inter = 2304;
  c.experts = 8;
  c.tokens = GENERATE(8, 100);
  c.top_k = 2;
  c.scales = Scales::kRealistic;
  c.late_rows = late;
  c.order = late ? testing::PairOrder::kStream : testing::PairOrder::kByRows;
  c.persistent = true;
  c.seed = 97 + static_cast<std::uint64_t>(c.tokens);
  check(c);
}

TEST_CASE("mxfp4 expert FFN waits on the token ring's readiness counters") {
  Case c;
  c.hidden = 512;
  c.inter = 256;
  c.experts = 4;
  c.tokens = 20;
  c.top_k = 2;
  c.late_rows = true;
  c.seed = 23;
  check(c);
}

// L2 launched by PDL acquires each pass's rows from the last of L1's tile groups
// (ExpertRowsHandshake) instead of waiting for the whole L1 grid, three pairs in a row with h
// poisoned before each: the policy's 8-, 16- and 32-row passes (T = 5, 20, 45: 32-row passes side
// by side at 150), and V4.1's shape (18 L1 tile groups arriving per pass).
TEST_CASE("mxfp4 expert FFN: L2 acquires L1's rows through the rows handshake") {
  Case c;
  bool const v41 = GENERATE(false, true);
  c.hidden = v41 ? 5120 : 512;
  c.inter = v41 ? 2304 : 256;
  c.experts = 4;
  c.tokens = v41 ? GENERATE(8, 40) : GENERATE(5, 20, 45, 150);
  c.top_k = 2;
  c.scales = Scales::kRealistic;
  c.order = testing::PairOrder::kByRows;
  c.seed = 71 + static_cast<std::uint64_t>(c.tokens);
  check(c);
}

TEST_CASE(
    "mxfp4 expert FFN at DeepSeek's expert shapes (V4.1: H 5120, I 2304; V4: H 4096, I 2048)") {
  Case c;
  bool const v41 = GENERATE(true, false);
  c.hidden = v41 ? 5120 : 4096;
  c.inter = v41 ? 2304 : 2048;
  c.experts = 4;
  c.tokens = GENERATE(1, 8, 33);
  c.top_k = 2;
  c.scales = c.tokens == 8 ? Scales::kExtreme : Scales::kRealistic;
  c.seed = (v41 ? 29 : 31) + static_cast<std::uint64_t>(c.tokens);
  check(c);
}

TEST_CASE("mxfp4 expert wgmma rejects shapes and configurations it cannot run") {
  Fp8ExpertGemmArgs args;
  alignas(16) std::uint8_t bytes[16] = {};  // bulk-copy sources must be 16-byte aligned
  alignas(16) float scales[4] = {};
  int value = 0;
  args.weights = bytes;
  args.weight_scales = scales;
  args.x = bytes;
  args.x_scales = scales;
  args.expert_offsets = args.active_experts = args.num_active = &value;
  args.h = bytes;
  args.h_scales = scales;
  args.x_rows = 4;
  args.chunks = 2;
  args.tiles = 8;  // I = 64: an L1 CTA owns 128 outputs
  CHECK(launch_mxfp4_expert_wgmma(args, nullptr).code() == StatusCode::kInvalidArgument);
  args.tiles = 2304 / 8;  // V4.1's I: 18 CTAs of 128 outputs
  args.fixed_expert = 0;  // the FP8 kernel's shared-expert mode is not implemented here
  args.fixed_rows = 1;
  args.max_active = 1;
  CHECK(launch_mxfp4_expert_wgmma(args, nullptr).code() == StatusCode::kInvalidArgument);
  args.fixed_expert = -1;
  // Valid arguments with no expert active: nothing launches, OK (the control for what follows).
  args.max_active = 0;
  CHECK(launch_mxfp4_expert_wgmma(args, nullptr).ok());
  // The x rows come by TMA (v5.14): a launch without the x buffer's rows (its map's bound) is
  // refused.
  args.x_rows = 0;
  CHECK(launch_mxfp4_expert_wgmma(args, nullptr).code() == StatusCode::kInvalidArgument);
  args.x_rows = 4;
  args.weights = bytes + 8;
  CHECK(launch_mxfp4_expert_wgmma(args, nullptr).code() == StatusCode::kInvalidArgument);
  args.weights = bytes;
  // Forced configurations that do not exist are refused, never ignored.
  Mxfp4WgmmaTuning tuning;
  tuning.pass_rows = 48;
  CHECK(launch_mxfp4_expert_wgmma(args, nullptr, tuning).ok());
  for (int const bad : {-8, 24, 64}) {
    tuning.pass_rows = bad;
    CHECK(launch_mxfp4_expert_wgmma(args, nullptr, tuning).code() == StatusCode::kInvalidArgument);
  }
  // A cap of passes side by side: 0 (none) to 8.
  Mxfp4WgmmaTuning capped;
  capped.max_passes = 8;
  CHECK(launch_mxfp4_expert_wgmma(args, nullptr, capped).ok());
  for (int const bad : {-1, 9}) {
    capped.max_passes = bad;
    CHECK(launch_mxfp4_expert_wgmma(args, nullptr, capped).code() == StatusCode::kInvalidArgument);
  }
  // The rows handshake: rows_done is L1's and needs h written (not stream-only); an L2 by rows is
  // launched by PDL over per-row counters.
  int done = 0;
  unsigned error = 0;
  args.rows_done = &done;
  CHECK(launch_mxfp4_expert_wgmma(args, nullptr).ok());
  Mxfp4WgmmaTuning stream_only;
  stream_only.stream_only = true;
  CHECK(launch_mxfp4_expert_wgmma(args, nullptr, stream_only).code() ==
        StatusCode::kInvalidArgument);
  Fp8ExpertGemmArgs down = args;
  down.stage = ExpertGemmStage::kDown;
  down.tiles = 5120 / 16;
  down.y = reinterpret_cast<std::uint16_t*>(bytes);
  CHECK(launch_mxfp4_expert_wgmma(down, nullptr).code() == StatusCode::kInvalidArgument);
  down.rows_done = nullptr;
  down.x_ready_by_rows = true;
  CHECK(launch_mxfp4_expert_wgmma(down, nullptr).code() == StatusCode::kInvalidArgument);
  down.overlap_previous = true;
  down.ready_blocks = &done;
  down.ready_block_rows = 2;
  down.error = &error;
  CHECK(launch_mxfp4_expert_wgmma(down, nullptr).code() == StatusCode::kInvalidArgument);
  down.ready_block_rows = 1;
  CHECK(launch_mxfp4_expert_wgmma(down, nullptr).ok());
  // Persistent CTAs (work_counters) are accepted.
  Fp8ExpertGemmArgs persistent = args;
  persistent.rows_done = nullptr;
  persistent.work_counters = &done;
  persistent.max_active = 0;
  CHECK(launch_mxfp4_expert_wgmma(persistent, nullptr).ok());
}

}  // namespace
}  // namespace gcmoe::kernels
