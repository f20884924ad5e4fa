#pragma once
// The MXFP4 expert WGMMA kernel (mxfp4_expert_wgmma.h describes the pipeline, the decode and the
// scale handling); its configurations and launches are mxfp4_expert_wgmma.cu. Included by
// mxfp4_expert_wgmma.cu only.

#include <cuda.h>

#include <type_traits>

#include "kernels/hopper/ptx.cuh"
#include "kernels/hopper/wgmma_register_a.cuh"
#include "kernels/moe/expert_cta_prologue.cuh"
#include "kernels/moe/expert_feed_pass.cuh"
#include "kernels/moe/expert_pass_epilogue.cuh"
#include "kernels/moe/expert_rows_ready.cuh"
#include "kernels/moe/expert_work_queue.cuh"
#include "kernels/moe/expert_x_map.h"
#include "kernels/moe/expert_x_rows_copy.cuh"
#include "kernels/moe/feed_register_split.h"
#include "kernels/moe/fp8_expert_gemm.h"
#include "kernels/moe/mxfp4_expert_wgmma_layout.h"
#include "kernels/moe/mxfp4_register_decode.cuh"
#include "kernels/moe/mxfp4_window_table.h"
#include "kernels/moe/pass_width.cuh"
#include "kernels/moe/stage_ring_cursor.cuh"

namespace gcmoe::kernels::mxfp4_wgmma {

namespace ptx = hopper;
using mxfp4_decode::add_token_scaled;
using mxfp4_decode::decode_step;
using mxfp4_decode::fold_k_step;
using mxfp4_decode::load_shared_16;
using mxfp4_decode::load_shared_8;
using mxfp4_decode::read_special;
using mxfp4_decode::step_scale;
using mxfp4_decode::window_table_at;

using expert_epilogue::finish_pass;

constexpr int kScaleImageBytes = kMxScaleImageWords * 4;  // 256
// A fallback tile's constant table: the e2m1 values times 2^-6 (version 4's decode), undone by
// the k-step factors 2^(b - 121).
__device__ __forceinline__ uint2 fallback_table() {
  constexpr std::uint32_t kLow = mx_window_table_word(kMxFallbackStep, 0);
  constexpr std::uint32_t kHigh = mx_window_table_word(kMxFallbackStep, 1);
  return {kLow, kHigh};
}
constexpr int kXRowBytes = kMxChunkK;  // one FP8 x row of a chunk
static_assert(kXRowBytes == kXMapChunkBytes, "the x tensor map's box is one chunk's rows");

// Work items per active expert slot: its tile groups (kWgs 64-row tiles each; args.tiles counts
// 16-row tiles) times the passes side by side. A classic grid's x; a persistent CTA's tickets
// count slots by it (expert_work_queue.cuh).
template <int kWgs>
__host__ __device__ constexpr int items_per_slot(int tiles, int passes) {
  return tiles * 16 / kMxTileRows / kWgs * passes;
}

// Consumer thread `tid`'s row g (0..7 of its warp's 16) in a CTA's row_factors: warpgroup
// tid / 128's 64 rows, its warp's 16 from (tid / 32 % 4) * 16; row g + 8 is 8 further.
__device__ __forceinline__ int row_factor_index(int tid) {
  return tid / 128 * kMxTileRows + tid % 128 / 32 * 16 + tid % 32 / 4;
}

template <int kWgs, int kN>
__host__ __device__ constexpr int stage_bytes() {
  return (kN * kXRowBytes + kWgs * (kMxCodeImageBytes + kScaleImageBytes) + 1023) / 1024 * 1024;
}

// kWgs consumer warpgroups (64 weight rows each) + kFeedWarps producer warps (two: one for the
// weight images, one for the x rows and scales, each waiting for the stage's release); kN token
// rows per pass; `passes` CTAs of one tile group run side by side over an expert's rows (as
// fp8_expert_wgmma). A stage's weight images and x rows share one full and one empty barrier
// (v5.10; version 3's early release of the weight part alone measured 1-2% slower and is gone).
// row_images: words from an expert's scales to its tiles' row images (version 6).
// stream_only (benchmark probe): the consumers release every stage unread. The x rows come by one
// TMA tensor copy per stage through x_map (v5.14: the cp.async path is gone, see the consumers'
// ring below).
//
// The ring of stages (v5.14, 32 rows v5.15): every pass starts its ring at stage 0, so the
// consumers' chunk loop is unrolled over the stages: each chunk's stage is a constant, and its
// barrier, code, scale and descriptor addresses are immediates. With the stage a loop variable,
// ptxas rebuilt the x rows' WGMMA descriptors in vector registers and moved them to uniform ones
// at every k-step (the 8-row L1 loop: 148 instructions per chunk, 120 unrolled). A pass whose
// chunks are not a multiple of kStages leaves the ring early, so the next pass's first stages
// wait for fewer chunks ahead. The unrolled loop is kStages chunk bodies, so the stage counts at
// 32 rows are kept small (mxfp4_expert_wgmma.cu): with 8 or 10 stages (~26 KB of code per width's
// loop) the 32-row kernels measured up to 22% slower at T=1, where they run the fewest
// instructions (bench/NOTES.md, twenty-fourth and twenty-fifth sessions).
//
// kPersistent (twenty-seventh session): the launch holds one CTA per place the SMs have for it, and
// each takes work items (what one classic CTA does: a tile group's passes over one expert) from
// args.work_counters until none is left (expert_work_queue.cuh); the stage ring and its barriers
// carry from one item to the next.
template <ExpertGemmStage kStage, int kWgs, int kN, int kStages, int kMinBlocks, int kFeedWarps,
          bool kPersistent>
__global__ void __launch_bounds__((kWgs * 4 + kFeedWarps) * 32, kMinBlocks)
    mxfp4_expert_wgmma_kernel(Fp8ExpertGemmArgs args, int passes, int stream_only, int row_images,
                              __grid_constant__ CUtensorMap const x_map) {
  static_assert(kN == 8 || kN == 16 || kN == 32 || kN == 48);
  static_assert(kWgs * 4 <= kWorkRingReaders, "one ring place per consumer warp");
  static_assert(kStage != ExpertGemmStage::kGateUp || kWgs * 32 == kMxChunkK,
                "L1 CTAs own one 128-output requantization group");
  constexpr int kStageBytes = stage_bytes<kWgs, kN>();
  constexpr int kConsumerThreads = kWgs * 128;
  // The 16-row L1 (two CTAs per SM, 56 registers) and the 48-row kernels keep one WGMMA in
  // flight per k-step chain.
  constexpr bool kOneInFlight = (kStage == ExpertGemmStage::kGateUp && kN == 16) || kN == 48;
  using Registers = FeedRegisters<kWgs, kFeedWarps, kMinBlocks>;
  constexpr int kCodesOffset = kN * kXRowBytes;  // x rows first: 1024-aligned for the swizzle
  constexpr int kScalesOffset = kCodesOffset + kWgs * kMxCodeImageBytes;
  extern __shared__ unsigned char smem_raw[];
  // [full | empty][kStages]: one array, so the consumers reach both from one address register.
  // Both feed warps fill a stage under its one full barrier and wait for its one empty barrier;
  // the consumers wait and arrive once a chunk.
  __shared__ __align__(8) std::uint64_t barriers[2 * kStages];
  std::uint64_t* const full = barriers;
  std::uint64_t* const empty = barriers + kStages;
  __shared__ unsigned amax[kN];
  __shared__ WorkRing work;
  // The windowed decode's tables (mxfp4_window_table.h), 8 bytes per window step; 256-aligned, so
  // that one byte permute puts a row's step byte (8 d) over the base (window_table_at).
  __shared__ __align__(256) std::uint32_t window_table[2 * kMxWindowSteps];
  // The warpgroups' tiles' row images (windowed tiles' row factors), per item: each consumer
  // thread stores its two rows' factors and reads them back after the chunk loop; held in
  // registers across it they were spilled at the register caps.
  __shared__ float row_factors[kWgs * kMxTileRows];
  // A classic CTA's one item (blockIdx), found before the barriers as before.
  WorkItem classic;
  if constexpr (!kPersistent) {
    if (!begin_expert_cta<false>(args, classic.slot)) {
      return;
    }
  }
  int const chunks = args.chunks;
  int const warp = static_cast<int>(threadIdx.x) / 32;
  int const lane = static_cast<int>(threadIdx.x) % 32;

  // Dynamic shared memory: kStages stages from the first 1024-byte boundary, then the stages'
  // activation scales [kStages][kN].
  unsigned char* const stages = smem_raw + stage_alignment_pad(smem_raw);
  std::uint32_t const smem_base = ptx::smem_address(stages);
  float* const x_scale_stages = reinterpret_cast<float*>(stages + kStages * kStageBytes);
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      // The weights' expect_tx (bulk copies); 32 cp.async lanes (scales) + the x rows' expect_tx.
      constexpr unsigned kWeightArrivals = 1;
      constexpr unsigned kXArrivals = 33;
      ptx::mbarrier_init(ptx::smem_address(&full[s]), kWeightArrivals + kXArrivals);
      ptx::mbarrier_init(ptx::smem_address(&empty[s]), kWgs * 4);  // one per consumer warp
    }
    if constexpr (kPersistent) {
      for (int k = 0; k < kWorkRing; ++k) {
        ptx::mbarrier_init(ptx::smem_address(&work.full[k]), 1);  // the taking warp's lane 0
      }
    }
    ptx::fence_barrier_init();
  }
  if (threadIdx.x < 2 * kMxWindowSteps) {
    window_table[threadIdx.x] =
        mx_window_table_word(static_cast<int>(threadIdx.x) / 2, static_cast<int>(threadIdx.x) % 2);
  }
  __syncthreads();

  if constexpr (!kPersistent) {
    if (!cta_first_pass<kN>(classic.slot, passes, classic.group, classic.first_pass)) {
      return;
    }
  }

  if (warp >= kWgs * 4) {
    // Producer warp(s): weights first (static), then the rows' readiness, then x rows and scales;
    // the first feed warp issues the weights, the second the x rows and scales, each in its own
    // order (the weight copies never wait for the rows' readiness). A feed warpgroup hands its
    // registers to the consumers, and its last two warps have nothing to do.
    if constexpr (Registers::kWarpgroup) {
      ptx::setmaxnreg_dec<Registers::kFeed>();
      if (warp >= kWgs * 4 + 2) {
        return;
      }
    }
    FeedRole const role = feed_role<2>(warp, kWgs * 4);
    // The stages' parities in `phases`. One set for both roles: each feed warp has one role and
    // its own copy. Per-role sets, or parities counted by division, held more registers across
    // the feed loop, and the 8-row L2 (48 registers) spilled.
    static_assert(kFeedWarps == 2 || kFeedWarps == 4,
                  "one role per feed warp: each fills the stages in its order");
    PassRingPhases phases;
    auto const use_of = [&](int c) { return take_stage(phases, c % kStages); };
    bool wait_prior = waits_for_prior_grid(args);
    // One item's passes.
    auto const feed_item = [&](WorkItem const& item) {
      int const expert = item.slot.expert;
      int const group = item.group;
      int const row_end = item.slot.row_end;
      std::uint8_t const* const codes = args.weights + expert * args.weight_stride;
      auto const* const scales = reinterpret_cast<std::uint8_t const*>(args.weight_scales) +
                                 expert * args.scale_stride * 4;
      for (int pass = item.first_pass; pass < row_end; pass += passes * kN) {
        int const rows = min(kN, row_end - pass);
        auto const issue_weights = [&](int c) {
          StageCursor const use = use_of(c);
          int const s = use.s;
          std::uint32_t const full_bar = ptx::smem_address(&full[s]);
          ptx::mbarrier_wait(ptx::smem_address(&empty[s]), use.phase ^ 1u);
          std::uint32_t const stage = smem_base + static_cast<std::uint32_t>(s * kStageBytes);
          if (lane == 0) {
            // The group's kWgs images of chunk c are contiguous (mxfp4_wgmma_image): one bulk copy
            // for the codes, one for the scales.
            ptx::mbarrier_arrive_expect_tx(full_bar, kWgs * (kMxCodeImageBytes + kScaleImageBytes));
            std::int64_t const first = (static_cast<std::int64_t>(group) * chunks + c) * kWgs;
            ptx::bulk_copy_g2s(stage + kCodesOffset, codes + first * kMxCodeImageBytes,
                               kWgs * kMxCodeImageBytes, full_bar);
            ptx::bulk_copy_g2s(stage + kScalesOffset, scales + first * kScaleImageBytes,
                               kWgs * kScaleImageBytes, full_bar);
          }
        };
        auto const issue_tokens = [&](int c) {
          StageCursor const use = use_of(c);
          int const s = use.s;
          std::uint32_t const full_bar = ptx::smem_address(&full[s]);
          ptx::mbarrier_wait(ptx::smem_address(&empty[s]), use.phase ^ 1u);
          std::uint32_t const x_stage = smem_base + static_cast<std::uint32_t>(s * kStageBytes);
          // One TMA tensor copy of the pass's kN rows (128-byte swizzle); rows past the expert's
          // are other experts' (their columns are never written), rows past the buffer zero-filled
          // by the map's bound.
          if (lane == 0) {
            ptx::mbarrier_arrive_expect_tx(full_bar, kN * kXRowBytes);
            ptx::tma_load_2d(x_stage, &x_map, c * kMxChunkK, pass, full_bar);
          }
          copy_x_scales<kN>(x_scale_stages + s * kN, args.x_scales, chunks, pass, rows, c, lane);
          ptx::cp_async_arrive_noinc(full_bar);
        };
        feed_pass(
            role, chunks, kStages, wait_prior,
            [&] {
              if (args.ready_blocks != nullptr) {
                int const epoch = ready_epoch(args);
                wait_rows_ready(args, epoch, pass, rows, lane);
              }
            },
            issue_weights, issue_tokens);
      }
    };
    if constexpr (kPersistent) {
      // The weights warp takes the tickets and publishes them; the tokens warp reads them.
      feed_work_items<kN>(args, work, role.weights, lane, items_per_slot<kWgs>(args.tiles, passes),
                          passes, feed_item);
    } else {
      feed_item(classic);
    }
    return;
  }

  // Consumer warpgroups. Every address the loop needs is hoisted: a stage adds the constant
  // s * kStageBytes to each.
  if constexpr (Registers::kWarpgroup) {
    ptx::setmaxnreg_inc<Registers::kConsumer>();
  }
  // full[s] at bars + 8 s, empty[s] at bars + 8 (s + kStages).
  std::uint32_t const bars = ptx::smem_address(&barriers[0]);
  // The x rows' descriptor; a k-step of 32 bytes adds 2 to its address field and a stage
  // kStageBytes / 16 (address >> 4, shared addresses stay below 2^18). Built from 32-bit halves:
  // the high half is a constant and the low half never carries, so no 64-bit add per chunk.
  std::uint32_t const desc0_lo = static_cast<std::uint32_t>(ptx::smem_desc_sw128(smem_base));
  std::uint32_t const desc_hi = static_cast<std::uint32_t>(ptx::smem_desc_sw128(0) >> 32);
  auto const desc_at = [desc_hi](std::uint32_t lo) {
    return (static_cast<std::uint64_t>(desc_hi) << 32) | lo;
  };

  // The stages' full-phase parities.
  PassRingPhases phases;
  // One item's passes.
  std::uint32_t const table_base = ptx::smem_address(&window_table[0]);
  auto const consume_item = [&](WorkItem const& item) {
    // The thread's places from %tid.x. With a feed warpgroup the lane is read again past the
    // reallocation: held from the prologue, ptxas kept it in local memory across the setmaxnreg. A
    // persistent CTA reads them all per item (volatile): held across its loop over items they were
    // spilled at the register caps (version 6).
    int const me =
        kPersistent ? static_cast<int>(read_special<1>()) : static_cast<int>(threadIdx.x);
    int const c_lane = kPersistent             ? me % 32
                       : Registers::kWarpgroup ? static_cast<int>(read_special<1>() % 32)
                                               : lane;
    int const wg = me / 128;
    int const wslice = me / 32 % 4;
    int const g = c_lane / 4;
    int const t = c_lane % 4;
    std::uint32_t const my_codes =
        smem_base + kCodesOffset + wg * kMxCodeImageBytes + me % 128 * 16;
    std::uint32_t const my_scales =
        smem_base + kScalesOffset + wg * kScaleImageBytes + (wslice * 8 + g) * 8;
    int const row_end = item.slot.row_end;
    int const tile = item.group * kWgs + wg;
    // The tile's row image (after the expert's scale images: mxfp4_wgmma_row_image): the rows g
    // and g + 8 factors 2^(R - 133) of a windowed tile, -1 of a fallback one (every row of a tile
    // has the same kind, so the branch on it is uniform over the warpgroup). row_images is a
    // parameter: the product of tiles and chunks, hoisted out of a persistent CTA's item loop, was
    // spilled.
    float const* const row_image = args.weight_scales + item.slot.expert * args.scale_stride +
                                   row_images + (tile * kMxScaleImageWords + wslice * 16 + g);
    float const row_factor_g = __ldg(row_image);
    float const row_factor_g8 = __ldg(row_image + 8);
    // Threads t = 0..3 of a row store the same value. The tile's kind is read back from the
    // thread's own row per pass (`windowed`): held in a register across the pass loop, the
    // persistent 48-row L2 spilled it.
    row_factors[row_factor_index(me)] = row_factor_g;
    row_factors[row_factor_index(me) + 8] = row_factor_g8;
    // A persistent CTA's row end, read again per pass from the ring.
    auto const item_row_end = [&] {
      if constexpr (kPersistent) {
        return current_row_end(work);
      } else {
        return row_end;
      }
    };
    for (int pass = item.first_pass; pass < item_row_end(); pass += passes * kN) {
      int const rows = min(kN, item_row_end() - pass);
      float acc[kN / 2];
#pragma unroll
      for (int i = 0; i < kN / 2; ++i) {
        acc[i] = 0.0f;
      }
      if (stream_only != 0) {
        for (int c = 0; c < chunks; ++c) {
          StageCursor const use = take_stage(phases, c % kStages);
          int const s = use.s;
          ptx::mbarrier_wait(bars + 8 * s, use.phase);
          __syncwarp();
          if (c_lane == 0) {
            ptx::mbarrier_arrive(bars + 8 * (s + kStages));
          }
        }
        continue;
      }
      // The pass's chunk loop at WGMMA width kW: the rows rounded up to a width the kernel has
      // (a multiple of 8, at most kN: 8 ... 48). A narrower WGMMA, fold and token-scale pass for a
      // pass with fewer rows than kN (an expert's last pass, or an expert with few rows) — the fold
      // is 2 kW FFMA per thread and chunk, the largest part of the 32-row loop (bench/NOTES.md
      // v5.8). The x rows past the width are copied but never read; acc past kW / 2 stays zero.
      auto const chunk_loop = [&](auto width, auto windowed_tile) {
        constexpr int kW = decltype(width)::value;
        constexpr bool kWindowed = decltype(windowed_tile)::value;
        // Whether this chunk's stage was seen full by the test issued during the previous chunk
        // (v5.11): the pass's first stage is waited for, each later one tested a chunk ahead, so
        // the test's latency overlaps the folds; only a stage not yet full is waited for here.
        bool ready = false;
        // One chunk at stage use.s (taken from `phases`), whose full phase has parity use.phase.
        auto const chunk = [&](StageCursor const use) {
          int const s = use.s;
          if (!ready) {
            ptx::mbarrier_wait(bars + 8 * s, use.phase);
          }
          int const so = s * kStageBytes;
          std::uint32_t const b_desc = desc0_lo + static_cast<std::uint32_t>(so >> 4);
          uint4 const q0 = load_shared_16(my_codes + so);
          uint4 const q1 = load_shared_16(my_codes + so + 128 * 16);
          uint2 const sw = load_shared_8(my_scales + so);
          // The stage after this one, tested before the chunk's last wait (see `ready`): the x rows
          // come by TMA, in the async proxy the WGMMA reads, so no proxy fence (v5.7).
          StageCursor const next = peek_stage(phases, s + 1 == kStages ? 0 : s + 1);
          float chunk_sum[kW / 2];
          if constexpr (kWindowed) {
            // Version 6: each k-step decodes through its row's window table (step byte 8 d), so
            // the four k-steps share the row's exponent base and chain into one accumulator; only
            // the tokens' scales are folded per chunk. Widths up to 16 hold two fragments in turn
            // (one WGMMA waited for before its registers are decoded again: the 16-row L1 and the
            // 8-row L2 spilled with four); wider ones decode all four, then issue the four WGMMAs
            // back to back as one commit group (v6.1: one warpgroup-wide issue per chunk instead
            // of four interleaved with the decode, 4 fewer instructions; 0.5-2.6% faster at one
            // rank of eight T=256-384 on an H100, bench/NOTES.md thirty-first session).
            constexpr int kFragments = kW <= 16 ? 2 : 4;
            std::uint32_t a[kFragments][4];
#pragma unroll
            for (int step = 0; step < 4; ++step) {
              uint2 const table_g = load_shared_8(window_table_at(sw.x, table_base, step));
              uint2 const table_g8 = load_shared_8(window_table_at(sw.y, table_base, step));
              std::uint32_t(&fragment)[4] = a[step % kFragments];
              decode_step(q0, q1, step, table_g, table_g8, fragment);
              ptx::fence_fragment(fragment);
              if constexpr (kFragments == 2) {
                ptx::wgmma_fence();
                ptx::WgmmaFp8RegA<kW>::run(chunk_sum, fragment, desc_at(b_desc + 2 * step),
                                           step > 0);
                ptx::wgmma_commit();
                if (step == 1 || step == 2) {
                  ptx::wgmma_wait<1>();
                }
              }
            }
            if constexpr (kFragments == 4) {
              ptx::wgmma_fence();
#pragma unroll
              for (int step = 0; step < 4; ++step) {
                ptx::WgmmaFp8RegA<kW>::run(chunk_sum, a[step], desc_at(b_desc + 2 * step),
                                           step > 0);
              }
              ptx::wgmma_commit();
            }
            ready = ptx::mbarrier_test_wait(bars + 8 * next.s, next.phase);
            ptx::wgmma_wait<0>();
            ptx::fence_accumulators<kW>(chunk_sum);
          } else if constexpr (kOneInFlight) {
            // One WGMMA in flight: k-step s + 1 is decoded while k-step s runs, then s is folded
            // before s + 1 is issued into the same accumulator. Two accumulators in flight need
            // kW / 2 + 4 more registers, which the 56-register cap of the 16-row L1 (two 576-thread
            // CTAs per SM) could only hold by spilling (bench/NOTES.md, twenty-third session).
            float part[kW / 2];
            std::uint32_t a[2][4];
            decode_step(q0, q1, 0, fallback_table(), fallback_table(), a[0]);
            ptx::fence_fragment(a[0]);
            ptx::wgmma_fence();
            ptx::WgmmaFp8RegA<kW>::run(part, a[0], desc_at(b_desc), false);
            ptx::wgmma_commit();
#pragma unroll
            for (int step = 1; step < 4; ++step) {
              decode_step(q0, q1, step, fallback_table(), fallback_table(), a[step % 2]);
              ptx::fence_fragment(a[step % 2]);
              ptx::wgmma_wait<0>();
              ptx::fence_accumulators<kW>(part);
              fold_k_step(chunk_sum, part, sw, step - 1);
              ptx::wgmma_fence();
              ptx::WgmmaFp8RegA<kW>::run(part, a[step % 2], desc_at(b_desc + 2 * step), false);
              ptx::wgmma_commit();
            }
            ready = ptx::mbarrier_test_wait(bars + 8 * next.s, next.phase);
            ptx::wgmma_wait<0>();
            ptx::fence_accumulators<kW>(part);
            fold_k_step(chunk_sum, part, sw, 3);
          } else {
            // One WGMMA per k-step (one e8m0 block) into a fresh accumulator, two accumulators in
            // turn: k-step s + 2's decode and MMA are issued while k-step s is folded with its own
            // scale.
            float part[2][kW / 2];
            std::uint32_t a[4][4];
            decode_step(q0, q1, 0, fallback_table(), fallback_table(), a[0]);
            ptx::fence_fragment(a[0]);
            decode_step(q0, q1, 1, fallback_table(), fallback_table(), a[1]);
            ptx::fence_fragment(a[1]);
            ptx::wgmma_fence();
            ptx::WgmmaFp8RegA<kW>::run(part[0], a[0], desc_at(b_desc), false);
            ptx::wgmma_commit();
            ptx::WgmmaFp8RegA<kW>::run(part[1], a[1], desc_at(b_desc + 2), false);
            ptx::wgmma_commit();
#pragma unroll
            for (int step = 2; step < 4; ++step) {
              ptx::wgmma_wait<1>();
              ptx::fence_accumulators<kW>(part[step % 2]);
              decode_step(q0, q1, step, fallback_table(), fallback_table(), a[step]);
              ptx::fence_fragment(a[step]);
              fold_k_step(chunk_sum, part[step % 2], sw, step - 2);
              ptx::wgmma_fence();
              ptx::WgmmaFp8RegA<kW>::run(part[step % 2], a[step], desc_at(b_desc + 2 * step),
                                         false);
              ptx::wgmma_commit();
            }
            ready = ptx::mbarrier_test_wait(bars + 8 * next.s, next.phase);
            ptx::wgmma_wait<1>();
            ptx::fence_accumulators<kW>(part[0]);
            fold_k_step(chunk_sum, part[0], sw, 2);
            ptx::wgmma_wait<0>();
            ptx::fence_accumulators<kW>(part[1]);
            fold_k_step(chunk_sum, part[1], sw, 3);
          }
          // The tokens' activation scales of this chunk (columns 8j + 2t, + 1), read before the
          // stage is handed back (the producer refills them with the x rows).
          add_token_scaled<kW>(acc, chunk_sum, ptx::smem_address(x_scale_stages + s * kN + 2 * t));
          __syncwarp();
          if (c_lane == 0) {
            ptx::mbarrier_arrive(bars + 8 * (s + kStages));
          }
        };
        for (int c0 = 0; c0 < chunks; c0 += kStages) {
#pragma unroll
          for (int s = 0; s < kStages; ++s) {
            if (c0 + s == chunks) {
              break;
            }
            chunk(take_stage(phases, s));
          }
        }
      };
      // The thread's row g in row_factors, its index read again by a volatile %tid.x.
      auto const own_row = [] { return row_factor_index(static_cast<int>(read_special<1>())); };
      bool const windowed = *static_cast<float volatile*>(&row_factors[own_row()]) > 0.0f;
      // The rows rounded up to a multiple of 8, at most kN: the chunk loop at that width, of the
      // tile's kind.
      with_pass_width<kN, 8>(rows, [&](auto width) {
        if (windowed) {
          chunk_loop(width, std::true_type{});
        } else {
          chunk_loop(width, std::false_type{});
        }
      });
      {
        // The rows' exponent bases, once per pass, from shared memory at the thread's rows: a
        // windowed tile's 2^(R - 133), a fallback tile's -1 taken as 1 (fabsf).
        int const row = own_row();
        float const factor_g = fabsf(row_factors[row]);
        float const factor_g8 = fabsf(row_factors[row + 8]);
#pragma unroll
        for (int i = 0; i < kN / 2; ++i) {
          acc[i] *= i % 4 < 2 ? factor_g : factor_g8;
        }
      }

      // The thread's index by a volatile %tid.x read after the chunk loop, for the epilogue: from
      // threadIdx.x, ptxas hoisted the output row it derives out of the pass loop and held it
      // across the chunk loop (the 32-row L1's spill before v5.11).
      int const tid = static_cast<int>(read_special<1>());
      // The CTA's tile group (L1: its requantization group) and this warpgroup's tile, re-derived
      // here (a classic CTA's from the special registers, a persistent one's from its ticket, read
      // again): held across the main loop, they were spilled at the register caps (56 for 8 rows
      // per pass, 96 for 32; version 6's 48-row L2 at 96).
      int cta_group = 0;
      if constexpr (kPersistent) {
        cta_group = current_group(work);
      } else {
        cta_group = static_cast<int>(read_special<0>()) / passes;
      }
      int const pass_tile = cta_group * kWgs + tid / 128;
      finish_pass<kStage, kN, kConsumerThreads>(acc, args, pass, rows, pass_tile,
                                                kStage == ExpertGemmStage::kDown ? 0 : cta_group,
                                                amax, tid);
    }
  };
  if constexpr (kPersistent) {
    consume_work_items(work, consume_item);
  } else {
    consume_item(classic);
  }
}

}  // namespace gcmoe::kernels::mxfp4_wgmma
