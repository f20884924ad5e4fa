#pragma once
// The MXFP4 expert WGMMA kernel for many rows per expert (version 5; bench/NOTES.md, "MXFP4
// expert GEMM", v5): one weight stream and one decode per (tile, chunk) serve a pass of up to 64
// token rows, where the kernel with a producer warp (mxfp4_expert_wgmma_kernel.cuh) runs 8-, 16-
// or 32-row passes side by side, each streaming the expert's weights again.
//
// Why a kernel of its own: a 64-row pass holds the sums (32 registers), the chunk's scaled sum
// (32) and the k-step accumulators (32) beside the A fragments and the codes; with a producer
// warp an L1 CTA has 17 warps, so at most 96 registers per thread. Without one (as the FP8 wide
// kernel, fp8_expert_wgmma_wide.cuh) an L1 CTA is 16 warps at 128 registers: thread 0 issues the
// weight bulk copies and the x rows' TMA tensor copy, the first kN threads copy the rows'
// activation scales, then arrive on the stage's barrier. A stage is refilled kLag chunks late
// (before waiting for chunk c, the stage of chunk c - kLag), so kStages - kLag chunks are in
// flight.
//
// Each k-step's decoded A fragment feeds kParts WGMMAs, one per part of the pass's columns
// (m64n(kN/kParts)k32 each), kParts in flight: part p of k-step s is folded with the k-step's
// factor 2^(b - 121) (as version 4) and its next k-step issued while the other parts' MMAs run,
// so a warpgroup's chain waits on one narrow MMA at a time; the parts' accumulators together
// hold kN/2 registers whatever kParts.

#include <cuda.h>

#include <type_traits>
#include <utility>

#include "kernels/hopper/ptx.cuh"
#include "kernels/hopper/wgmma_register_a.cuh"
#include "kernels/moe/expert_cta_prologue.cuh"
#include "kernels/moe/expert_pass_epilogue.cuh"
#include "kernels/moe/expert_rows_ready.cuh"
#include "kernels/moe/fp8_expert_gemm.h"
#include "kernels/moe/mxfp4_expert_wgmma_kernel.cuh"
#include "kernels/moe/mxfp4_expert_wgmma_layout.h"
#include "kernels/moe/mxfp4_register_decode.cuh"
#include "kernels/moe/stage_ring_cursor.cuh"

namespace gcmoe::kernels::mxfp4_wgmma {

// f(std::integral_constant<int, i>{}) for i = 0 .. kCount - 1, in order (compile-time indices:
// wgmma.wait_group takes an immediate).
template <int kCount, typename F>
__device__ __forceinline__ void static_for(F const& f) {
  [&]<int... kI>(std::integer_sequence<int, kI...>) {
    (f(std::integral_constant<int, kI>{}), ...);
  }
  (std::make_integer_sequence<int, kCount>{});
}

// Thread 0 loads a stage's x rows with one TMA tensor copy (x_map, as the kernel with feed warps;
// the cp.async path went with v5.14), the first kN threads the rows' scales.
template <ExpertGemmStage kStage, int kWgs, int kN, int kParts, int kStages, int kMinBlocks,
          int kLag>
__global__ void __launch_bounds__(kWgs * 128, kMinBlocks)
    mxfp4_expert_wgmma_wide_kernel(Fp8ExpertGemmArgs args, int passes, int stream_only,
                                   __grid_constant__ CUtensorMap const x_map) {
  static_assert(kN == 32 || kN == 64);
  static_assert(kLag >= 1 && kLag < kStages);
  static_assert(kStage != ExpertGemmStage::kGateUp || kWgs * 32 == kMxChunkK,
                "L1 CTAs own one 128-output requantization group");
  static_assert(kParts == 2 || kParts == 4);
  constexpr int kW = kN / kParts;  // columns per WGMMA
  constexpr int kStageBytes = stage_bytes<kWgs, kN>();
  constexpr int kThreads = kWgs * 128;
  constexpr int kCodesOffset = kN * kXRowBytes;
  constexpr int kScalesOffset = kCodesOffset + kWgs * kMxCodeImageBytes;
  static_assert(kN <= kThreads, "one thread per row's activation scale");
  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) std::uint64_t barriers[2 * kStages];  // [full][kStages], [empty]
  __shared__ unsigned amax[kN];

  ExpertSlot slot;
  if (!begin_expert_cta<false>(args, slot)) {
    return;
  }
  int const expert = slot.expert;
  int const row_end = slot.row_end;
  int const chunks = args.chunks;
  int const tid = static_cast<int>(threadIdx.x);
  int const warp = tid / 32;
  int const lane = tid % 32;

  unsigned char* const stages = smem_raw + stage_alignment_pad(smem_raw);
  std::uint32_t const smem_base = ptx::smem_address(stages);
  float* const x_scale_stages = reinterpret_cast<float*>(stages + kStages * kStageBytes);
  // full[s] at bars + 8 s, empty[s] at bars + 8 (kStages + s).
  std::uint32_t const bars = ptx::smem_address(&barriers[0]);
  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) {
      // The first kN threads' cp.async arrivals (.noinc) plus thread 0's expect_tx.
      ptx::mbarrier_init(bars + 8 * s, kN + 1);
      ptx::mbarrier_init(bars + 8 * (kStages + s), kWgs * 4);  // one per warp
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
  std::uint8_t const* const codes =
      args.weights + expert * args.weight_stride + tile0 * chunks * kMxCodeImageBytes;
  std::uint8_t const* const scales = reinterpret_cast<std::uint8_t const*>(args.weight_scales) +
                                     expert * args.scale_stride * 4 +
                                     tile0 * chunks * kScaleImageBytes;
  int const epoch = ready_epoch(args);

  // Consumer addresses, hoisted: a stage adds s * kStageBytes to each.
  int const wg = warp / 4;
  int const wslice = warp % 4;
  int const g = lane / 4;
  int const t = lane % 4;
  int const wg_thread = tid % 128;
  std::uint32_t const my_codes = smem_base + kCodesOffset + wg * kMxCodeImageBytes + wg_thread * 16;
  std::uint32_t const my_scales =
      smem_base + kScalesOffset + wg * kScaleImageBytes + (wslice * 8 + g) * 8;
  // The x rows' descriptor (as the kernel with a producer warp): a k-step adds 2 to the address
  // field, a part's rows kW * 128 / 16, a stage kStageBytes / 16.
  std::uint32_t const desc0_lo = static_cast<std::uint32_t>(ptx::smem_desc_sw128(smem_base));
  std::uint32_t const desc_hi = static_cast<std::uint32_t>(ptx::smem_desc_sw128(0) >> 32);
  auto const desc_at = [desc_hi](std::uint32_t lo) {
    return (static_cast<std::uint64_t>(desc_hi) << 32) | lo;
  };
  constexpr std::uint32_t kPartDesc = kW * kXRowBytes / 16;

  int it = 0;  // the CTA's stage uses before this pass
  bool wait_prior = waits_for_prior_grid(args);
  for (int pass = first_pass; pass < row_end; pass += passes * kN) {
    int const rows = min(kN, row_end - pass);
    // Stage use `use` takes chunk c: every thread waits until each warp has released the stage's
    // previous use (a fresh barrier's parity 1 counts as complete), thread 0 issues the weight
    // images' bulk copies; then (fill_tokens) every thread its x units and scale.
    auto const fill_weights = [&](int c, int use) {
      StageCursor const cursor = stage_cursor<kStages>(use);
      int const s = cursor.s;
      ptx::mbarrier_wait(bars + 8 * (kStages + s), cursor.phase ^ 1u);
      if (tid == 0) {
        std::uint32_t const full_bar = bars + 8 * s;
        std::uint32_t const stage = smem_base + static_cast<std::uint32_t>(s * kStageBytes);
        ptx::mbarrier_arrive_expect_tx(
            full_bar, kWgs * (kMxCodeImageBytes + kScaleImageBytes) + kN * kXRowBytes);
        // The group's kWgs images of chunk c are contiguous (mxfp4_wgmma_image).
        std::int64_t const first = static_cast<std::int64_t>(c) * kWgs;
        ptx::bulk_copy_g2s(stage + kCodesOffset, codes + first * kMxCodeImageBytes,
                           kWgs * kMxCodeImageBytes, full_bar);
        ptx::bulk_copy_g2s(stage + kScalesOffset, scales + first * kScaleImageBytes,
                           kWgs * kScaleImageBytes, full_bar);
      }
    };
    float const* const scale_src = args.x_scales + (pass + tid) * static_cast<std::int64_t>(chunks);
    auto const fill_tokens = [&](int c, int use) {
      int const s = stage_cursor<kStages>(use).s;
      std::uint32_t const stage = smem_base + static_cast<std::uint32_t>(s * kStageBytes);
      // The x rows' bytes are in thread 0's expect_tx (fill_weights, issued first).
      if (tid == 0) {
        ptx::tma_load_2d(stage, &x_map, c * kMxChunkK, pass, bars + 8 * s);
      }
      if (tid < kN) {
        bool const present = tid < rows;
        ptx::copy_4_zfill(ptx::smem_address(x_scale_stages + s * kN + tid),
                          present ? scale_src + c : args.x_scales, present ? 4u : 0u);
        ptx::cp_async_arrive_noinc(bars + 8 * s);
      }
    };
    // Prologue: the first stages' weights go out before the rows are known to be ready, then warp
    // 0 acquires the rows' readiness counters, then the x rows and scales follow.
    int const early = min(kStages, chunks);
    for (int c = 0; c < early; ++c) {
      fill_weights(c, it + c);
    }
    if (wait_prior) {
      ptx::wait_prior_grid();  // x (L1's h) is the previous kernel's output
      wait_prior = false;
    }
    if (args.ready_blocks != nullptr) {
      if (warp == 0) {
        wait_rows_ready(args, epoch, pass, rows, lane);
      }
      ptx::named_barrier_sync(expert_epilogue::kConsumerBarrier, kThreads);
    }
    for (int c = 0; c < early; ++c) {
      fill_tokens(c, it + c);
    }

    float acc[kN / 2];
#pragma unroll
    for (int i = 0; i < kN / 2; ++i) {
      acc[i] = 0.0f;
    }
    for (int c = 0; c < chunks; ++c) {
      int const next = c - kLag + kStages;
      if (c >= kLag && next < chunks) {
        fill_weights(next, it + next);
        fill_tokens(next, it + next);
      }
      StageCursor const cursor = stage_cursor<kStages>(it + c);
      int const s = cursor.s;
      ptx::mbarrier_wait(bars + 8 * s, cursor.phase);
      if (stream_only == 0) {
        int const so = s * kStageBytes;
        std::uint32_t const b_desc = desc0_lo + static_cast<std::uint32_t>(so >> 4);
        uint4 const q0 = load_shared_16(my_codes + so);
        uint2 const sw = load_shared_8(my_scales + so);
        float part[kParts][kW / 2];
        float chunk_sum[kN / 2];
        std::uint32_t a[2][4];
        decode_step(q0, q0, 0, a[0]);
        ptx::fence_fragment(a[0]);
        ptx::wgmma_fence();
        static_for<kParts>([&](auto pc) {
          constexpr int p = decltype(pc)::value;
          ptx::WgmmaFp8RegA<kW>::run(part[p], a[0], desc_at(b_desc + p * kPartDesc), false);
          ptx::wgmma_commit();
        });
        uint4 q1 = q0;  // k-steps 0 and 1 read only q0
#pragma unroll
        for (int step = 1; step < 4; ++step) {
          // k-steps 2 and 3 are the second code unit's (loaded here: fewer registers live).
          if (step == 2) {
            q1 = load_shared_16(my_codes + so + 128 * 16);
          }
          // a[step % 2]'s previous k-step (step - 2) was waited for in the last iteration.
          decode_step(q0, q1, step, a[step % 2]);
          ptx::fence_fragment(a[step % 2]);
          // kParts groups are in flight: the oldest is part p of the previous k-step.
          static_for<kParts>([&](auto pc) {
            constexpr int p = decltype(pc)::value;
            ptx::wgmma_wait<kParts - 1>();
            ptx::fence_accumulators<kW>(part[p]);
            fold_k_step(chunk_sum + p * (kW / 2), part[p], sw, step - 1);
            ptx::wgmma_fence();
            ptx::WgmmaFp8RegA<kW>::run(part[p], a[step % 2],
                                       desc_at(b_desc + p * kPartDesc + 2 * step), false);
            ptx::wgmma_commit();
          });
        }
        static_for<kParts>([&](auto pc) {
          constexpr int p = decltype(pc)::value;
          ptx::wgmma_wait<kParts - 1 - p>();
          ptx::fence_accumulators<kW>(part[p]);
          fold_k_step(chunk_sum + p * (kW / 2), part[p], sw, 3);
        });
        // The tokens' activation scales of this chunk (columns 8j + 2t, + 1).
        add_token_scaled<kN>(acc, chunk_sum, ptx::smem_address(x_scale_stages + s * kN + 2 * t));
      }
      __syncwarp();
      if (lane == 0) {
        ptx::mbarrier_arrive(bars + 8 * (kStages + s));
      }
    }
    it += chunks;
    if (stream_only == 0) {
      finish_pass<kStage, kN, kThreads>(acc, args, pass, rows, tile0 + wg, group, amax,
                                        static_cast<int>(threadIdx.x));
    }
  }
}

}  // namespace gcmoe::kernels::mxfp4_wgmma
