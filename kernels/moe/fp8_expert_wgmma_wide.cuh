#pragma once
// The FP8 expert WGMMA kernel for 64-, 96- and 128-row passes (v2.6): the weight stage of every
// (tile, chunk) serves up to two 64-row halves, so each weight tile crosses HBM → L2 → SM once for
// an expert's 65–128 rows instead of once per 64-row pass side by side.
//
// Why a kernel of its own: the halves need the sum (up to 64 registers) beside the chunk
// accumulators (~120 registers in all), and a CTA with a producer warp has 5 warps on one SM
// sub-partition (L1: 17 warps), which caps it at 96 registers (ptxas spilled ~800 bytes there);
// setmaxnreg would only free the producer's own warpgroup. Here there is no producer warp (L1 16
// warps, L2 two CTAs of 8: 4 warps per sub-partition, 128 registers): thread 0 issues the weight
// bulk copies, every thread copies its share of the x rows (at most 2 16-byte units per chunk in
// L1, 4 in L2) and arrives on the stage's barrier. A stage is refilled kLag chunks late: before
// waiting for chunk c, a thread refills the stage chunk c - kLag used, so kStages - kLag chunks
// are in flight during c. Every thread first waits for that stage's release by all warps, so with
// kLag 1 the warpgroups run each chunk in step; kLag 2 lets one run a chunk ahead (measured: no
// difference beyond run-to-run spread, bench/NOTES.md v2.6).
//
// v2.7: kStep, the WGMMA width step of the trimmed passes (8 or 16); kSingle, one WGMMA per
// k-step over all of a 96-row pass's columns instead of two 64-row halves.
// v2.20: kTmaX (96-row passes), thread 0 loads a stage's x rows with one TMA tensor copy (x_map,
// kN rows; rows past the expert's are other experts' and their columns are never written, rows
// past the buffer zero-filled by the map's bound), announced by mbarrier.expect_tx, and the
// consumers drop the proxy fence that x by cp.async needs (as the kernel with feed warps since
// v2.11).

#include "kernels/hopper/ptx.cuh"
#include "kernels/moe/expert_rows_ready.cuh"
#include "kernels/moe/expert_x_map.h"
#include "kernels/moe/fp8_expert_gemm.h"
#include "kernels/moe/fp8_expert_wgmma_layout.h"
#include "kernels/moe/fp8_expert_wgmma_pass.cuh"
#include "kernels/moe/stage_ring_cursor.cuh"

namespace gcmoe::kernels::fp8_wgmma {

template <ExpertGemmStage kStage, int kWgs, int kN, int kStages, int kMinBlocks, int kLag,
          int kStep, bool kSingle, bool kTmaX>
__global__ void __launch_bounds__(kWgs * 128, kMinBlocks)
    fp8_expert_wgmma_wide_kernel(Fp8ExpertGemmArgs args, int passes,
                                 __grid_constant__ XMap<kTmaX> const x_map) {
  static_assert(kN == kHalfRows || kN == 96 || kN == 2 * kHalfRows);
  static_assert(kLag >= 1 && kLag < kStages);
  static_assert(kStage != ExpertGemmStage::kGateUp || kWgs * 32 == kChunkK,
                "L1 CTAs own one 128-output requantization group");
  constexpr int kStageBytes = stage_bytes<kWgs, kN>();
  static_assert(kStageBytes % 1024 == 0, "stages must keep the 1024-byte swizzle alignment");
  constexpr int kThreads = kWgs * 128;
  // 16-byte x units per thread and chunk (the last may fall past the kN rows: not copied).
  constexpr int kUnitsPerThread = (kN * (kChunkK / 16) + kThreads - 1) / kThreads;
  static_assert(kUnitsPerThread <= 8);
  static_assert(kN <= kThreads, "one thread per row's activation scale");
  constexpr int kScaleFloats = kN + 2 * kWgs;
  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) std::uint64_t full[kStages];
  __shared__ __align__(8) std::uint64_t empty[kStages];
  __shared__ unsigned amax[kN];

  ExpertSlot slot;
  if (!begin_expert_cta<true>(args, slot)) {
    return;
  }
  int const expert = slot.expert;
  int const row_end = slot.row_end;
  int const chunks = args.chunks;
  std::int64_t const k_total = static_cast<std::int64_t>(chunks) * kChunkK;
  int const tid = static_cast<int>(threadIdx.x);
  int const warp = tid / 32;
  int const lane = tid % 32;

  std::uint32_t const align_pad = stage_alignment_pad(smem_raw);
  std::uint32_t const smem_base = ptx::smem_address(smem_raw) + align_pad;
  float* const scale_stages =
      reinterpret_cast<float*>(smem_raw + align_pad + kStages * kStageBytes);
  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) {
      // Every thread's cp.async arrival (.noinc) plus thread 0's expect_tx.
      ptx::mbarrier_init(ptx::smem_address(&full[s]), kThreads + 1);
      ptx::mbarrier_init(ptx::smem_address(&empty[s]), kWgs * 4);  // one per warp
    }
    ptx::fence_barrier_init();
  }
  __syncthreads();

  int group = 0;
  int first_pass = 0;
  if (!cta_first_pass<kN>(slot, passes, group, first_pass)) {
    return;
  }
  std::int64_t const tile0 = static_cast<std::int64_t>(group) * kWgs;
  // The CTA's tile group's images ([chunk][tile in group], from the group's first image) and
  // (threads < kWgs) one tile's scale pairs; few registers live across the chunk loop beside the
  // 96 of the sums and the chunk accumulator.
  // (wgmma_image_index(tile0, 0, chunks, kWgs) = tile0 · chunks, tile0 = group · kWgs.)
  std::uint8_t const* const weights =
      args.weights + expert * args.weight_stride + tile0 * chunks * kWgmmaChunkBytes;
  float const* const weight_scales =
      args.weight_scales + expert * args.scale_stride +
      (tile0 + min(tid, kWgs - 1)) * chunks * kWgmmaScalesPerTileChunk;
  int const epoch = ready_epoch(args);
  int const wg = warp / 4;
  PassView const view{.full0 = ptx::smem_address(&full[0]),
                      .empty0 = ptx::smem_address(&empty[0]),
                      .smem_base = smem_base,
                      .scale_stages = scale_stages,
                      .chunks = chunks,
                      .wg = wg,
                      .lane = lane};

  int it = 0;  // stage uses before this pass
  bool wait_prior = waits_for_prior_grid(args);
  for (int pass = first_pass; pass < row_end; pass += passes * kN) {
    int const rows = min(kN, row_end - pass);
    // The x rows the pass's WGMMAs read: the rows rounded up to the width step, zero-filled past
    // `rows`. The 128-row pass's halves are trimmed in steps of 16.
    constexpr int kCopyStep = (kN == kHalfRows || (kSingle && kN <= 96)) ? kStep : kWidthStep;
    int const width = (rows + kCopyStep - 1) / kCopyStep * kCopyStep;
    // This thread's x units: unit u = tid + kThreads·i is 16-byte unit u % 8 of row u / 8, so
    // unit i sits kThreads / 8 rows after unit 0, in the same swizzle phase (kThreads / 8 is a
    // multiple of 8): one source pointer, one stride and one destination offset serve them all.
    int const r0 = tid / 8;
    constexpr int kRowStep = kThreads / 8;
    static_assert(kRowStep % 8 == 0);
    std::uint8_t const* const unit_src = args.x + (pass + r0) * k_total + (tid % 8) * 16;
    std::int64_t const unit_stride = kRowStep * k_total;
    std::uint32_t const unit_dst =
        static_cast<std::uint32_t>(r0 * kChunkK + (((tid % 8) ^ (r0 % 8)) << 4));
    // The 128-row pass's activation-scale row (this thread's, if present), held through the loop.
    float const* const scale_src_held =
        kN > 96 && tid < rows ? args.x_scales + (pass + tid) * static_cast<std::int64_t>(chunks)
                              : args.x_scales;
    // Fills the stage of this pass's chunk c in two calls: weights_only (every thread waits for
    // the stage to be free, thread 0 issues the weight copies), then this thread's x units and
    // scales, with its arrival once the copies it issued have landed. The stage is s; the wait
    // for its release takes `release_parity`, the parity of the phase in which its previous use
    // was released (a fresh barrier's parity 1 counts as complete, so the first round passes).
    auto const fill = [&](int c, int s, std::uint32_t release_parity, bool weights_only) {
      std::uint32_t const full_bar = ptx::smem_address(&full[s]);
      std::uint32_t const stage = smem_base + static_cast<std::uint32_t>(s * kStageBytes);
      if (weights_only) {
        // Every thread first sees the stage's previous use released by every warp.
        ptx::mbarrier_wait(ptx::smem_address(&empty[s]), release_parity);
        if (tid == 0) {
          // The group's kWgs images of chunk c are side by side (fp8_expert_wgmma_layout.h).
          ptx::mbarrier_arrive_expect_tx(full_bar, kWgs * kWgmmaChunkBytes);
          ptx::bulk_copy_g2s(stage, weights + c * kWgs * kWgmmaChunkBytes, kWgs * kWgmmaChunkBytes,
                             full_bar);
        }
        return;
      }
      std::uint32_t const x_stage = stage + kWgs * kWgmmaChunkBytes;
      std::int64_t const k_offset = static_cast<std::int64_t>(c) * kChunkK;
      if constexpr (kTmaX) {
        if (tid == 0) {
          // One box of the pass's kN rows. Announced before thread 0's own arrival below, so the
          // phase cannot complete without these bytes.
          ptx::mbarrier_expect_tx(full_bar, kN * kChunkK);
          ptx::tma_load_2d(x_stage, &x_map, c * kChunkK, pass, full_bar);
        }
      }
#pragma unroll
      for (int i = 0; i < (kTmaX ? 0 : kUnitsPerThread); ++i) {
        int const r = r0 + kRowStep * i;
        if (r < width) {
          // Absent rows inside the width are zero-filled (src not read; any valid address: x, a
          // kernel parameter, so no register holds it — the weights pointer there made ptxas
          // spill 8 bytes in the 96-row L1 since v2.14).
          bool const row_present = r < rows;
          ptx::copy_16_zfill(x_stage + unit_dst + i * kRowStep * kChunkK,
                             row_present ? unit_src + i * unit_stride + k_offset : args.x,
                             row_present ? 16u : 0u);
        }
      }
      float* const stage_scales = scale_stages + s * kScaleFloats;
      if (tid < kN) {
        // Rows past the pass's are zero. Up to 96 rows the address is recomputed per chunk, not
        // held through the loop: that keeps L1's 96-row pass (a 48-register chunk accumulator
        // beside the 48-register sum) at 128 registers without a spill; the 128-row passes keep
        // v2.6's held pointer (recomputing makes ptxas spill in the 128-row L2 pass). The offset
        // is 32-bit (v2.17: fewer registers than the 64-bit product): x is rows × chunks × 128
        // bytes of device memory (141 GB / 128 B = 1.1e9 < 2^31).
        bool const scale_present = tid < rows;
        float const* src = scale_src_held + c;
        if constexpr (kN <= 96) {
          src = args.x_scales + ((pass + tid) * chunks + c);
        }
        ptx::copy_4_zfill(ptx::smem_address(stage_scales + tid),
                          scale_present ? src : args.x_scales, scale_present ? 4u : 0u);
      }
      if (tid < kWgs) {
        ptx::copy_8(ptx::smem_address(stage_scales + kN + 2 * tid),
                    weight_scales + c * kWgmmaScalesPerTileChunk);
      }
      ptx::cp_async_arrive_noinc(full_bar);
    };
    // Prologue: the first stages' weights go out before the rows are known to be ready, then
    // warp 0 acquires the rows' readiness counters and every thread copies its x units.
    int const early = min(kStages, chunks);
    for (int c = 0; c < early; ++c) {
      StageCursor const use = stage_cursor<kStages>(it + c);
      fill(c, use.s, use.phase ^ 1u, true);
    }
    if (wait_prior) {
      ptx::wait_prior_grid();  // x (L1's h) is the previous kernel's output
      wait_prior = false;
    }
    if (args.ready_blocks != nullptr) {
      if (warp == 0) {
        wait_rows_ready(args, epoch, pass, rows, lane);
      }
      ptx::named_barrier_sync(kConsumerBarrier, kThreads);
    }
    for (int c = 0; c < early; ++c) {
      StageCursor const use = stage_cursor<kStages>(it + c);
      fill(c, use.s, use.phase ^ 1u, false);
    }
    // Before waiting for chunk c (stage cursor.s of phase cursor.phase): refill the stage of chunk
    // c - kLag (this warp has released it) with chunk c - kLag + kStages. That stage use comes
    // kStages - kLag uses after chunk c's: the same round when cursor.s < kLag, else the next, and
    // its previous use was released in the phase before that round's.
    auto const refill = [&](int c, StageCursor cursor) {
      int const next = c - kLag + kStages;
      if (c >= kLag && next < chunks) {
        bool const next_round = cursor.s >= kLag;
        int const s = next_round ? cursor.s - kLag : cursor.s + kStages - kLag;
        std::uint32_t const parity = cursor.phase ^ (next_round ? 1u : 0u) ^ 1u;
        fill(next, s, parity, true);
        fill(next, s, parity, false);
      }
    };
    float acc[kN / 2];
#pragma unroll
    for (int i = 0; i < kN / 2; ++i) {
      acc[i] = 0.0f;
    }
    consume_pass_trimmed<kStage == ExpertGemmStage::kDown, kN, kWgs, kStages, kStep, kSingle,
                         !kTmaX>(acc, it, rows, view, refill);
    finish_pass<kStage, kN, kThreads>(acc, args, pass, rows, tile0 + wg, group, amax,
                                      static_cast<int>(threadIdx.x));
  }
}

}  // namespace gcmoe::kernels::fp8_wgmma
