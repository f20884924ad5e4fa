#pragma once
// The FP8 expert WGMMA kernels' consumer side (fp8_expert_wgmma.h describes the pipeline): the
// per-pass chunk loop with its WGMMA widths trimmed to the rows present; the pass epilogue (bf16 y
// rows for L2; SwiGLU, amax and FP8 h for L1) is expert_pass_epilogue.cuh, shared with the MXFP4
// kernel. Shared by the kernel with a producer warp (fp8_expert_wgmma_kernel.cuh, 8/16-row passes)
// and the one without (fp8_expert_wgmma_wide.cuh).

#include "kernels/hopper/ptx.cuh"
#include "kernels/hopper/wgmma_fp8_n.cuh"
#include "kernels/moe/expert_cta_prologue.cuh"
#include "kernels/moe/expert_pass_epilogue.cuh"
#include "kernels/moe/fp8_expert_gemm.h"
#include "kernels/moe/fp8_expert_wgmma_layout.h"
#include "kernels/moe/pass_width.cuh"
#include "kernels/moe/stage_ring_cursor.cuh"

namespace gcmoe::kernels::fp8_wgmma {

namespace ptx = hopper;

using expert_epilogue::finish_pass;
inline constexpr int kConsumerBarrier = expert_epilogue::kConsumerBarrier;
// Wide passes (kN >= 64) run in halves of 64 rows (or, up to 96 rows, one WGMMA per k-step),
// each WGMMA trimmed to the rows present rounded up to the configuration's width step (8 or 16).
inline constexpr int kHalfRows = 64;
inline constexpr int kWidthStep = 16;

template <int kWgs, int kN>
__host__ __device__ constexpr int stage_bytes() {
  return kWgs * kWgmmaChunkBytes + kN * kChunkK;
}

// The rows [pass, pass + rows) of one consumer warpgroup's pass, as the chunk loop needs them.
struct PassView {
  std::uint32_t full0 = 0;   // shared address of full[0] (8 bytes per stage)
  std::uint32_t empty0 = 0;  // shared address of empty[0]
  std::uint32_t smem_base = 0;
  float const* scale_stages = nullptr;
  int chunks = 0;
  int wg = 0;
  int lane = 0;
};

// The descriptor of a 128-byte-swizzled operand at a shared address, as two 32-bit halves: the
// high half is a constant, and a k-step of 32 bytes adds 2 to the low half's address field (shared
// addresses stay below 2^18, so the field never carries), so no masking or 64-bit add per k-step.
__device__ __forceinline__ std::uint64_t desc_plus(std::uint32_t desc_lo, int k) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(ptx::smem_desc_sw128(0) >> 32))
          << 32) |
         (desc_lo + static_cast<std::uint32_t>(2 * k));
}
__device__ __forceinline__ std::uint32_t desc_lo(std::uint32_t address) {
  return static_cast<std::uint32_t>(ptx::smem_desc_sw128(address));
}

// One half's k-chunk: four m64nWk32 steps into a chunk accumulator (committed as one group; the
// caller fences and waits). kHalf selects the half: B rows 64·kHalf onward.
template <int kW, int kHalf>
__device__ __forceinline__ void mma_half(float (&part)[kW / 2], std::uint32_t a_base,
                                         std::uint32_t b_base) {
  std::uint32_t const a_lo = desc_lo(a_base);
  std::uint32_t const b_lo = desc_lo(b_base + kHalf * kHalfRows * kChunkK);
#pragma unroll
  for (int k = 0; k < kChunkK / 32; ++k) {
    ptx::WgmmaFp8<kW>::run(part, desc_plus(a_lo, k), desc_plus(b_lo, k), k > 0);
  }
  ptx::wgmma_commit();
}

// Folds a completed chunk accumulator into acc (columns 64·kHalf onward) with the tile's weight
// scales and each row's activation scale (zero past the expert's rows). kOneRowScale: both of the
// tile's scales are one value (L2; fp8_expert_wgmma_layout.h), so each column's product of weight
// and activation scale serves both of the thread's rows: 2 FMUL + 4 FFMA per 8 columns instead of
// 4 + 4 (v2.18).
template <bool kOneRowScale, int kW, int kHalf, int kN>
__device__ __forceinline__ void fold_half(float (&acc)[kN / 2], float (&part)[kW / 2],
                                          float const* stage_scales, float2 ws, int t) {
  ptx::fence_accumulators<kW>(part);
#pragma unroll
  for (int jj = 0; jj < kW / 8; ++jj) {
    int const j = kHalf * (kHalfRows / 8) + jj;
    // Columns 8j + 2t and + 1 (2t is even; the stage's scales are 8-aligned): one 8-byte load up
    // to 96 rows (v2.17: since the wide kernel's x-scale offsets are 32-bit, the 96-row passes fit
    // it in 128 registers); the 128-row passes load them apart (the paired load spills there).
    float x0;
    float x1;
    if constexpr (kN <= 96) {
      float2 const x = *reinterpret_cast<float2 const*>(stage_scales + 8 * j + 2 * t);
      x0 = x.x;
      x1 = x.y;
    } else {
      x0 = stage_scales[8 * j + 2 * t];
      x1 = stage_scales[8 * j + 2 * t + 1];
    }
    if constexpr (kOneRowScale) {
      float const s0 = ws.x * x0;
      float const s1 = ws.x * x1;
      acc[4 * j + 0] += part[4 * jj + 0] * s0;
      acc[4 * j + 1] += part[4 * jj + 1] * s1;
      acc[4 * j + 2] += part[4 * jj + 2] * s0;
      acc[4 * j + 3] += part[4 * jj + 3] * s1;
    } else {
      acc[4 * j + 0] += part[4 * jj + 0] * ws.x * x0;
      acc[4 * j + 1] += part[4 * jj + 1] * ws.x * x1;
      acc[4 * j + 2] += part[4 * jj + 2] * ws.y * x0;
      acc[4 * j + 3] += part[4 * jj + 3] * ws.y * x1;
    }
  }
}

// One half's k-chunk on its own: issued, waited for and folded.
template <bool kOneRowScale, int kW, int kHalf, int kN>
__device__ __forceinline__ void mma_fold(float (&acc)[kN / 2], std::uint32_t a_base,
                                         std::uint32_t b_base, float const* stage_scales, float2 ws,
                                         int t) {
  float part[kW / 2];
  ptx::wgmma_fence();
  mma_half<kW, kHalf>(part, a_base, b_base);
  ptx::wgmma_wait<0>();
  fold_half<kOneRowScale, kW, kHalf, kN>(acc, part, stage_scales, ws, t);
}

// Both halves' WGMMA chains in flight at once when their chunk accumulators fit beside acc
// (96-row passes: 32 + 16 + 48 registers); the 128-row pass runs them one after the other.
template <int kN, int kW1>
inline constexpr bool kParallelHalves = kW1 > 0 && kN <= 96;

// A consumer warpgroup's chunk loop over one pass at compile-time WGMMA widths: kW0 columns for the
// pass's first 64 rows (or all kN <= 32), kW1 for rows 64..127 (0: none). Both halves run on the
// same weight stage (side by side at 96 rows, one after the other through one chunk accumulator
// of at most 32 registers at 128), so up to 128 rows read each weight tile from shared memory
// once per half but from L2/HBM once. `it` counts the CTA's stages across passes. before_chunk(c,
// cursor) runs before the warp waits for chunk c, whose stage and phase the cursor holds (the wide
// kernel refills a stage there).
// kFenceX: the x rows came by cp.async (generic proxy), so a proxy fence orders them before the
// WGMMAs read them (async proxy); x by TMA needs none.
template <bool kOneRowScale, int kN, int kW0, int kW1, int kWgs, int kStages, bool kFenceX = true,
          typename BeforeChunk>
__device__ __forceinline__ void consume_pass(float (&acc)[kN / 2], int& it, PassView const& v,
                                             BeforeChunk const& before_chunk) {
  static_assert(kW0 + kW1 <= kN && (kW1 == 0 || kW0 == kHalfRows));
  constexpr int kStageBytes = stage_bytes<kWgs, kN>();
  constexpr int kScaleFloats = kN + 2 * kWgs;
  int const t = v.lane % 4;
  StageCursor cursor = stage_cursor<kStages>(it);
  it += v.chunks;
  for (int c = 0; c < v.chunks; ++c) {
    before_chunk(c, cursor);
    int const s = cursor.s;
    ptx::mbarrier_wait(v.full0 + 8u * static_cast<std::uint32_t>(s), cursor.phase);
    if constexpr (kFenceX) {
      ptx::fence_proxy_async_shared();
    }
    std::uint32_t const stage = v.smem_base + static_cast<std::uint32_t>(s * kStageBytes);
    std::uint32_t const a_base = stage + v.wg * kWgmmaChunkBytes;
    std::uint32_t const b_base = stage + kWgs * kWgmmaChunkBytes;
    float const* const stage_scales = v.scale_stages + s * kScaleFloats;
    float2 const ws = *reinterpret_cast<float2 const*>(stage_scales + kN + 2 * v.wg);
    if constexpr (kParallelHalves<kN, kW1>) {
      float part0[kW0 / 2];
      float part1[kW1 / 2];
      ptx::wgmma_fence();
      mma_half<kW0, 0>(part0, a_base, b_base);
      mma_half<kW1, 1>(part1, a_base, b_base);
      ptx::wgmma_wait<1>();
      fold_half<kOneRowScale, kW0, 0, kN>(acc, part0, stage_scales, ws, t);
      ptx::wgmma_wait<0>();
      fold_half<kOneRowScale, kW1, 1, kN>(acc, part1, stage_scales, ws, t);
    } else {
      mma_fold<kOneRowScale, kW0, 0, kN>(acc, a_base, b_base, stage_scales, ws, t);
      if constexpr (kW1 > 0) {
        mma_fold<kOneRowScale, kW1, 1, kN>(acc, a_base, b_base, stage_scales, ws, t);
      }
    }
    __syncwarp();
    if (v.lane == 0) {
      ptx::mbarrier_arrive(v.empty0 + 8u * static_cast<std::uint32_t>(s));
    }
    advance<kStages>(cursor);
  }
}

// Picks the chunk loop instantiation for a pass of `rows` rows: for kN >= 64 the WGMMA widths are
// trimmed to the rows present (multiples of kStep, 8 or 16), so a 64-row pass over 17 rows does
// a quarter of the padded tensor work. Up to 96 rows with kSingle (and always at 64) each k-step
// is one m64nWk32 over all the pass's columns (v2.7: the weight fragment is read from shared
// memory once per k-step); otherwise two 64-row halves (v2.6). The branch is taken once per pass,
// around the whole loop (a WGMMA behind a per-chunk branch would be serialized by ptxas, C7520).
// kFenceX as consume_pass's; kOneRowScale as fold_half's (true for L2).
template <bool kOneRowScale, int kN, int kWgs, int kStages, int kStep = kWidthStep,
          bool kSingle = false, bool kFenceX = true, typename BeforeChunk>
__device__ __forceinline__ void consume_pass_trimmed(float (&acc)[kN / 2], int& it, int rows,
                                                     PassView const& v,
                                                     BeforeChunk const& before_chunk) {
  static_assert(kStep == 8 || kStep == 16);
  if constexpr (kN <= 32) {
    consume_pass<kOneRowScale, kN, kN, 0, kWgs, kStages, kFenceX>(acc, it, v, before_chunk);
  } else if constexpr (kN == kHalfRows || (kSingle && kN <= 96)) {
    // The single-WGMMA chunk loop at the rows rounded up to a multiple of kStep.
    with_pass_width<kN, kStep>(rows, [&](auto width) {
      consume_pass<kOneRowScale, kN, decltype(width)::value, 0, kWgs, kStages, kFenceX>(
          acc, it, v, before_chunk);
    });
  } else {
    static_assert(kN == 96 || kN == 2 * kHalfRows);
    static_assert(kStep == kWidthStep, "the halves are trimmed in steps of 16");
    int const steps = (rows + kWidthStep - 1) / kWidthStep;  // 1..kN / 16
    if (steps <= 1) {
      consume_pass<kOneRowScale, kN, 16, 0, kWgs, kStages, kFenceX>(acc, it, v, before_chunk);
    } else if (steps == 2) {
      consume_pass<kOneRowScale, kN, 32, 0, kWgs, kStages, kFenceX>(acc, it, v, before_chunk);
    } else if (steps == 3) {
      consume_pass<kOneRowScale, kN, 48, 0, kWgs, kStages, kFenceX>(acc, it, v, before_chunk);
    } else if (steps == 4) {
      consume_pass<kOneRowScale, kN, 64, 0, kWgs, kStages, kFenceX>(acc, it, v, before_chunk);
    } else if (steps == 5) {
      consume_pass<kOneRowScale, kN, 64, 16, kWgs, kStages, kFenceX>(acc, it, v, before_chunk);
    } else if (kN == 96 || steps == 6) {
      consume_pass<kOneRowScale, kN, 64, 32, kWgs, kStages, kFenceX>(acc, it, v, before_chunk);
    } else if constexpr (kN > 96) {
      if (steps == 7) {
        consume_pass<kOneRowScale, kN, 64, 48, kWgs, kStages, kFenceX>(acc, it, v, before_chunk);
      } else {
        consume_pass<kOneRowScale, kN, 64, 64, kWgs, kStages, kFenceX>(acc, it, v, before_chunk);
      }
    }
  }
}

}  // namespace gcmoe::kernels::fp8_wgmma
