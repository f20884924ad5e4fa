#pragma once
// The FP8 expert WGMMA kernel with a producer warp, for 8- and 16-row passes (fp8_expert_wgmma.h
// describes the pipeline); its configurations and launches are fp8_expert_wgmma.cu, wider passes
// fp8_expert_wgmma_wide.cuh. Included by fp8_expert_wgmma.cu only.

#include "kernels/hopper/ptx.cuh"
#include "kernels/moe/expert_feed_pass.cuh"
#include "kernels/moe/expert_rows_ready.cuh"
#include "kernels/moe/expert_split_k.cuh"
#include "kernels/moe/expert_x_map.h"
#include "kernels/moe/expert_x_rows_copy.cuh"
#include "kernels/moe/fp8_expert_gemm.h"
#include "kernels/moe/fp8_expert_wgmma_layout.h"
#include "kernels/moe/fp8_expert_wgmma_pass.cuh"
#include "kernels/moe/stage_ring_cursor.cuh"

namespace gcmoe::kernels::fp8_wgmma {

// kWgs consumer warpgroups (64 weight rows each) + kFeedWarps producer warps (1: one warp issues
// weights then x rows per chunk; 2: one warp each, each waiting for the stage's release on its
// own). kN token rows per pass.
// Passes of one expert's rows run as `passes` CTAs side by side (blockIdx.x = tile group ·
// passes + pass), so a wide batch re-reads a weight tile from L2 rather than HBM; a CTA whose
// pass starts past the expert's rows exits.
// k_splits > 1 (launched in clusters of k_splits CTAs along x, blockIdx.x = (tile group · passes
// + pass) · k_splits + split): each CTA of a cluster streams its share of the K chunks and the
// cluster's CTA 0 sums the partial accumulators and runs the epilogue (expert_split_k.cuh); the
// launch guarantees one pass per CTA.
// kTmaX: the x warp loads a stage's x rows with one TMA tensor copy (x_map; rows past the buffer
// read as zeros, rows past the expert's are other experts' and their columns never written), so
// the consumers need no proxy fence before their WGMMAs; else cp.async (expert_x_rows_copy.cuh).
template <ExpertGemmStage kStage, int kWgs, int kN, int kStages, int kMinBlocks, int kFeedWarps,
          bool kTmaX>
__global__ void __launch_bounds__((kWgs * 4 + kFeedWarps) * 32, kMinBlocks)
    fp8_expert_wgmma_kernel(Fp8ExpertGemmArgs args, int passes, int k_splits,
                            __grid_constant__ XMap<kTmaX> const x_map) {
  static_assert(kN % 8 == 0 && kN >= 8 && kN <= 32, "wider passes: fp8_expert_wgmma_wide.cuh");
  static_assert(kStage != ExpertGemmStage::kGateUp || kWgs * 32 == kChunkK,
                "L1 CTAs own one 128-output requantization group");
  constexpr int kStageBytes = stage_bytes<kWgs, kN>();
  static_assert(kStageBytes % 1024 == 0, "stages must keep the 1024-byte swizzle alignment");
  constexpr int kConsumerThreads = kWgs * 128;
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
  std::int64_t const k_total = static_cast<std::int64_t>(args.chunks) * kChunkK;
  // This CTA's K chunks [c0, c0 + chunks) (all of them without a split).
  int const split = k_splits > 1 ? static_cast<int>(hopper::cluster_ctarank()) : 0;
  ChunkRange const range = split_chunks(args.chunks, split, k_splits);
  int const c0 = range.begin;
  int const chunks = range.end - range.begin;
  int const warp = static_cast<int>(threadIdx.x) / 32;
  int const lane = static_cast<int>(threadIdx.x) % 32;

  // Dynamic shared memory: kStages stages (weights, x rows) from the first 1024-byte boundary,
  // then the stages' scales [kStages][kScaleFloats].
  std::uint32_t const align_pad = stage_alignment_pad(smem_raw);
  std::uint32_t const smem_base = ptx::smem_address(smem_raw) + align_pad;
  constexpr int kScaleFloats = kN + 2 * kWgs;  // per stage: x rows', then the tiles' weight pairs
  float* const scale_stages =
      reinterpret_cast<float*>(smem_raw + align_pad + kStages * kStageBytes);
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      ptx::mbarrier_init(ptx::smem_address(&full[s]), 33);         // expect_tx + 32 cp.async lanes
      ptx::mbarrier_init(ptx::smem_address(&empty[s]), kWgs * 4);  // one per consumer warp
    }
    ptx::fence_barrier_init();
  }
  __syncthreads();

  int group = 0;  // 128 rows: kWgs 64-row tiles
  int first_pass = 0;
  if (!cta_first_pass_at<kN>(slot, passes, static_cast<int>(blockIdx.x) / k_splits, group,
                             first_pass)) {
    return;
  }
  std::int64_t const tile0 = static_cast<std::int64_t>(group) * kWgs;
  std::uint8_t const* const weights = args.weights + expert * args.weight_stride;

  if (warp >= kWgs * 4) {
    FeedRole const role = feed_role<kFeedWarps>(warp, kWgs * 4);
    // Producer warp. Per pass: the first stages' weight tiles go out before the pass's token
    // rows are known to be ready (weights are static, so the HBM stream starts at once), then the
    // rows' readiness counters are acquired, then their x rows and scales follow.
    int const epoch = ready_epoch(args);
    bool wait_prior = waits_for_prior_grid(args);
    int it = 0;
    for (int pass = first_pass; pass < row_end; pass += passes * kN) {
      int const rows = min(kN, row_end - pass);
      auto const issue_weights = [&](int c) {
        StageCursor const use = stage_cursor<kStages>(it + c);
        int const s = use.s;
        std::uint32_t const full_bar = ptx::smem_address(&full[s]);
        ptx::mbarrier_wait(ptx::smem_address(&empty[s]), use.phase ^ 1u);
        std::uint32_t const stage = smem_base + static_cast<std::uint32_t>(s * kStageBytes);
        if (lane == 0) {
          // The group's kWgs images of chunk c are side by side (fp8_expert_wgmma_layout.h).
          ptx::mbarrier_arrive_expect_tx(full_bar, kWgs * kWgmmaChunkBytes);
          // wgmma_image_index(tile0, c0 + c, args.chunks, kWgs), tile0 = group · kWgs.
          ptx::bulk_copy_g2s(stage,
                             weights + (tile0 * args.chunks + (c0 + c) * kWgs) * kWgmmaChunkBytes,
                             kWgs * kWgmmaChunkBytes, full_bar);
        }
      };
      auto const issue_tokens = [&](int c) {
        StageCursor const use = stage_cursor<kStages>(it + c);
        int const s = use.s;
        std::uint32_t const full_bar = ptx::smem_address(&full[s]);
        if constexpr (kFeedWarps == 2) {
          // The weights warp waited for the stage's release on its own.
          ptx::mbarrier_wait(ptx::smem_address(&empty[s]), use.phase ^ 1u);
        }
        std::uint32_t const x_stage =
            smem_base + static_cast<std::uint32_t>(s * kStageBytes) + kWgs * kWgmmaChunkBytes;
        float* const stage_scales = scale_stages + s * kScaleFloats;
        static_assert(kChunkK == kXChunkRowBytes && kChunkK == kXMapChunkBytes);
        if constexpr (kTmaX) {
          if (lane == 0) {
            ptx::mbarrier_expect_tx(full_bar, kN * kChunkK);
            ptx::tma_load_2d(x_stage, &x_map, (c0 + c) * kChunkK, pass, full_bar);
          }
        } else {
          copy_x_rows<kN>(x_stage, args.x, k_total, pass, rows, c0 + c, lane);
        }
        copy_x_scales<kN>(stage_scales, args.x_scales, args.chunks, pass, rows, c0 + c, lane);
        // The tiles' weight scale_inv pairs, so no consumer waits on a global load.
        if (lane < kWgs) {
          ptx::copy_8(ptx::smem_address(stage_scales + kN + 2 * lane),
                      args.weight_scales + expert * args.scale_stride +
                          ((tile0 + lane) * args.chunks + c0 + c) * kWgmmaScalesPerTileChunk);
        }
        ptx::cp_async_arrive_noinc(full_bar);
      };
      feed_pass(
          role, chunks, kStages, wait_prior,
          [&] {
            if (args.ready_blocks != nullptr) {
              wait_rows_ready(args, epoch, pass, rows, lane);
            }
          },
          issue_weights, issue_tokens);
      it += chunks;
    }
    return;
  }

  // Consumer warpgroups.
  int const wg = warp / 4;
  std::int64_t const tile = tile0 + wg;
  PassView const view{.full0 = ptx::smem_address(&full[0]),
                      .empty0 = ptx::smem_address(&empty[0]),
                      .smem_base = smem_base,
                      .scale_stages = scale_stages,
                      .chunks = chunks,
                      .wg = wg,
                      .lane = lane};

  int it = 0;
  for (int pass = first_pass; pass < row_end; pass += passes * kN) {
    int const rows = min(kN, row_end - pass);
    float acc[kN / 2];
#pragma unroll
    for (int i = 0; i < kN / 2; ++i) {
      acc[i] = 0.0f;
    }
    consume_pass_trimmed<kStage == ExpertGemmStage::kDown, kN, kWgs, kStages, kWidthStep, false,
                         !kTmaX>(acc, it, rows, view, [](int, StageCursor) {});
    if (k_splits > 1 && !sum_split_accumulators<kN / 2, kConsumerThreads>(
                            acc, smem_base, k_splits, static_cast<int>(threadIdx.x))) {
      return;  // a CTA of a split runs one pass; CTA 0 finishes it
    }

    finish_pass<kStage, kN, kConsumerThreads>(acc, args, pass, rows, tile, group, amax,
                                              static_cast<int>(threadIdx.x));
  }
}

}  // namespace gcmoe::kernels::fp8_wgmma
