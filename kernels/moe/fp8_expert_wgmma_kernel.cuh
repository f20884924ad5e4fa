#pragma once
// The FP8 expert WGMMA kernel template (fp8_expert_wgmma.h describes the pipeline); its
// configurations and launches are fp8_expert_wgmma.cu. Included by that file only.

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include "kernels/hopper/ptx.cuh"
#include "kernels/moe/expert_rows_ready.cuh"
#include "kernels/moe/fp8_activation_math.cuh"
#include "kernels/moe/fp8_expert_gemm.h"
#include "kernels/moe/fp8_expert_wgmma_layout.h"

namespace gcmoe::kernels::fp8_wgmma {

namespace ptx = hopper;

inline constexpr int kConsumerBarrier = 1;  // named barrier of the consumer warpgroups (0 = sync)
// Wide passes (kN >= 64) run in halves of 64 rows, each WGMMA trimmed to the rows present
// rounded up to kWidthStep.
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

// One half's k-chunk: four m64nWk32 steps into a chunk accumulator (committed as one group; the
// caller fences and waits). kHalf selects the half: B rows 64·kHalf onward.
template <int kW, int kHalf>
__device__ __forceinline__ void mma_half(float (&part)[kW / 2], std::uint32_t a_base,
                                         std::uint32_t b_base) {
#pragma unroll
  for (int k = 0; k < kChunkK / 32; ++k) {
    ptx::WgmmaFp8<kW>::run(part, ptx::smem_desc_sw128(a_base + k * 32),
                           ptx::smem_desc_sw128(b_base + kHalf * kHalfRows * kChunkK + k * 32),
                           k > 0);
  }
  ptx::wgmma_commit();
}

// Folds a completed chunk accumulator into acc (columns 64·kHalf onward) with the tile's weight
// scales and each row's activation scale (zero past the expert's rows).
template <int kW, int kHalf, int kN>
__device__ __forceinline__ void fold_half(float (&acc)[kN / 2], float (&part)[kW / 2],
                                          float const* stage_scales, float2 ws, int t) {
  ptx::fence_accumulators<kW>(part);
#pragma unroll
  for (int jj = 0; jj < kW / 8; ++jj) {
    int const j = kHalf * (kHalfRows / 8) + jj;
    float const x0 = stage_scales[8 * j + 2 * t];
    float const x1 = stage_scales[8 * j + 2 * t + 1];
    acc[4 * j + 0] += part[4 * jj + 0] * ws.x * x0;
    acc[4 * j + 1] += part[4 * jj + 1] * ws.x * x1;
    acc[4 * j + 2] += part[4 * jj + 2] * ws.y * x0;
    acc[4 * j + 3] += part[4 * jj + 3] * ws.y * x1;
  }
}

// One half's k-chunk on its own: issued, waited for and folded.
template <int kW, int kHalf, int kN>
__device__ __forceinline__ void mma_fold(float (&acc)[kN / 2], std::uint32_t a_base,
                                         std::uint32_t b_base, float const* stage_scales, float2 ws,
                                         int t) {
  float part[kW / 2];
  ptx::wgmma_fence();
  mma_half<kW, kHalf>(part, a_base, b_base);
  ptx::wgmma_wait<0>();
  fold_half<kW, kHalf, kN>(acc, part, stage_scales, ws, t);
}

// Both halves' WGMMA chains in flight at once when their chunk accumulators fit beside acc
// (96-row passes: 32 + 16 + 48 registers); the 128-row pass runs them one after the other.
template <int kN, int kW1>
inline constexpr bool kParallelHalves = kW1 > 0 && kN <= 96;

// A consumer warpgroup's chunk loop over one pass at compile-time WGMMA widths: kW0 columns for the
// pass's first 64 rows (or all kN <= 32), kW1 for rows 64..127 (0: none). Both halves run on the
// same weight stage (side by side at 96 rows, one after the other through one chunk accumulator
// of at most 32 registers at 128), so up to 128 rows read each weight tile from shared memory
// once per half but from L2/HBM once. `it` counts the CTA's stages across passes. before_chunk(c)
// runs before the warp waits for chunk c (the wide kernel refills a stage there).
template <int kN, int kW0, int kW1, int kWgs, int kStages, typename BeforeChunk>
__device__ __forceinline__ void consume_pass(float (&acc)[kN / 2], int& it, PassView const& v,
                                             BeforeChunk const& before_chunk) {
  static_assert(kW0 + kW1 <= kN && (kW1 == 0 || kW0 == kHalfRows));
  constexpr int kStageBytes = stage_bytes<kWgs, kN>();
  constexpr int kScaleFloats = kN + 2 * kWgs;
  int const t = v.lane % 4;
  for (int c = 0; c < v.chunks; ++c, ++it) {
    before_chunk(c);
    int const s = it % kStages;
    std::uint32_t const round = static_cast<std::uint32_t>(it / kStages);
    ptx::mbarrier_wait(v.full0 + 8u * static_cast<std::uint32_t>(s), round & 1u);
    ptx::fence_proxy_async_shared();
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
      fold_half<kW0, 0, kN>(acc, part0, stage_scales, ws, t);
      ptx::wgmma_wait<0>();
      fold_half<kW1, 1, kN>(acc, part1, stage_scales, ws, t);
    } else {
      mma_fold<kW0, 0, kN>(acc, a_base, b_base, stage_scales, ws, t);
      if constexpr (kW1 > 0) {
        mma_fold<kW1, 1, kN>(acc, a_base, b_base, stage_scales, ws, t);
      }
    }
    __syncwarp();
    if (v.lane == 0) {
      ptx::mbarrier_arrive(v.empty0 + 8u * static_cast<std::uint32_t>(s));
    }
  }
}

// Picks the chunk loop instantiation for a pass of `rows` rows: for kN >= 64 the WGMMA widths are
// trimmed to the rows present (16, 32, 48 or 64 per half), so a 64-row pass over 17 rows does a
// quarter of the padded tensor work. The branch is taken once per pass, around the whole loop
// (a WGMMA behind a per-chunk branch would be serialized by ptxas, C7520).
template <int kN, int kWgs, int kStages, typename BeforeChunk>
__device__ __forceinline__ void consume_pass_trimmed(float (&acc)[kN / 2], int& it, int rows,
                                                     PassView const& v,
                                                     BeforeChunk const& before_chunk) {
  if constexpr (kN <= 32) {
    consume_pass<kN, kN, 0, kWgs, kStages>(acc, it, v, before_chunk);
  } else {
    static_assert(kN == kHalfRows || kN == 96 || kN == 2 * kHalfRows);
    int const steps = (rows + kWidthStep - 1) / kWidthStep;  // 1..kN / 16
    if (steps <= 1) {
      consume_pass<kN, 16, 0, kWgs, kStages>(acc, it, v, before_chunk);
    } else if (steps == 2) {
      consume_pass<kN, 32, 0, kWgs, kStages>(acc, it, v, before_chunk);
    } else if (steps == 3) {
      consume_pass<kN, 48, 0, kWgs, kStages>(acc, it, v, before_chunk);
    } else if (kN == kHalfRows || steps == 4) {
      consume_pass<kN, 64, 0, kWgs, kStages>(acc, it, v, before_chunk);
    } else if constexpr (kN > kHalfRows) {
      if (steps == 5) {
        consume_pass<kN, 64, 16, kWgs, kStages>(acc, it, v, before_chunk);
      } else if (kN == 96 || steps == 6) {
        consume_pass<kN, 64, 32, kWgs, kStages>(acc, it, v, before_chunk);
      } else if constexpr (kN > 96) {
        if (steps == 7) {
          consume_pass<kN, 64, 48, kWgs, kStages>(acc, it, v, before_chunk);
        } else {
          consume_pass<kN, 64, 64, kWgs, kStages>(acc, it, v, before_chunk);
        }
      }
    }
  }
}

// A pass's outputs from its sums: L2 writes bf16 y rows; L1 applies SwiGLU (and the routing
// weight), takes each row's amax over the CTA's 128 outputs and writes FP8 h with its scale.
template <ExpertGemmStage kStage, int kN, int kConsumerThreads>
__device__ __forceinline__ void finish_pass(float (&acc)[kN / 2], Fp8ExpertGemmArgs const& args,
                                            int pass, int rows, std::int64_t tile, int group,
                                            unsigned (&amax)[kN]) {
  int const lane = static_cast<int>(threadIdx.x) % 32;
  int const wslice = static_cast<int>(threadIdx.x) / 32 % 4;
  int const g = lane / 4;
  int const t = lane % 4;
  if constexpr (kStage == ExpertGemmStage::kDown) {
    int const hidden = args.tiles * kTileRows;
    int const row = static_cast<int>(tile) * kWgmmaTileRows + 16 * wslice + g;
#pragma unroll
    for (int j = 0; j < kN / 8; ++j) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        int const col = 8 * j + 2 * t + (i & 1);
        if (col < rows) {
          __nv_bfloat16 const v = __float2bfloat16_rn(acc[4 * j + i]);
          args.y[static_cast<std::int64_t>(pass + col) * hidden + row + (i >= 2 ? 8 : 0)] =
              __bfloat16_as_ushort(v);
        }
      }
    }
  } else {
    int const inter = args.tiles * 8;
    int const out = static_cast<int>(tile) * 32 + 8 * wslice + g;
    float const limit = args.swiglu_limit;
    ptx::named_barrier_sync(kConsumerBarrier, kConsumerThreads);  // last pass's reads are done
    for (int i = static_cast<int>(threadIdx.x); i < kN; i += kConsumerThreads) {
      amax[i] = 0u;
    }
    ptx::named_barrier_sync(kConsumerBarrier, kConsumerThreads);
    float hv[kN / 8][2];
#pragma unroll
    for (int j = 0; j < kN / 8; ++j) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        float v = swiglu(acc[4 * j + e], acc[4 * j + 2 + e], limit);
        int const col = 8 * j + 2 * t + e;
        if (args.route_weights != nullptr && col < rows) {
          v *= args.route_weights[pass + col];
        }
        hv[j][e] = v;
        // amax over the CTA's 128 outputs: the 8 lanes sharing t, then the warps.
        float m = fabsf(v);
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 4));
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 8));
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 16));
        if (g == 0 && col < rows) {
          atomicMax(&amax[col], __float_as_uint(m));
        }
      }
    }
    ptx::named_barrier_sync(kConsumerBarrier, kConsumerThreads);
    int const groups = inter / kChunkK;
#pragma unroll
    for (int j = 0; j < kN / 8; ++j) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        int const col = 8 * j + 2 * t + e;
        if (col < rows) {
          float const a = __uint_as_float(amax[col]);
          float const scale = fp8_group_scale(args.requant, a);
          std::int64_t const r = pass + col;
          args.h[r * inter + out] = fp8_encode(hv[j][e], scale);
          if (threadIdx.x < 4) {
            args.h_scales[r * groups + group] = scale;
          }
        }
      }
    }
  }
}

// kWgs consumer warpgroups (64 weight rows each) + one producer warp. kN token rows per pass.
// Passes of one expert's rows run as `passes` CTAs side by side (blockIdx.x = tile group ·
// passes + pass), so a wide batch re-reads a weight tile from L2 rather than HBM; a CTA whose
// pass starts past the expert's rows exits.
template <ExpertGemmStage kStage, int kWgs, int kN, int kStages, int kMinBlocks>
__global__ void __launch_bounds__((kWgs * 4 + 1) * 32, kMinBlocks)
    fp8_expert_wgmma_kernel(Fp8ExpertGemmArgs args, int passes) {
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

  if (args.allow_overlap_next) {
    ptx::launch_dependents();
  }
  int const slot = static_cast<int>(blockIdx.y);
  int expert = args.fixed_expert;
  int row_begin = 0;
  int row_end = args.fixed_rows;
  if (expert < 0) {
    if (slot >= *args.num_active) {
      return;
    }
    expert = args.active_experts[slot];
    row_begin = args.expert_offsets[expert];
    row_end = args.expert_offsets[expert + 1];
  }
  int const chunks = args.chunks;
  std::int64_t const k_total = static_cast<std::int64_t>(chunks) * kChunkK;
  int const warp = static_cast<int>(threadIdx.x) / 32;
  int const lane = static_cast<int>(threadIdx.x) % 32;

  // Dynamic shared memory: kStages stages (weights, x rows) from the first 1024-byte boundary,
  // then the stages' scales [kStages][kScaleFloats].
  std::uint32_t const align_pad =
      ((ptx::smem_address(smem_raw) + 1023u) & ~1023u) - ptx::smem_address(smem_raw);
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

  int const group = static_cast<int>(blockIdx.x) / passes;  // 128 rows: kWgs 64-row tiles
  int const first_pass = row_begin + (static_cast<int>(blockIdx.x) % passes) * kN;
  if (first_pass >= row_end) {
    return;
  }
  std::int64_t const tile0 = static_cast<std::int64_t>(group) * kWgs;
  std::uint8_t const* const weights = args.weights + expert * args.weight_stride;

  if (warp == kWgs * 4) {
    // Producer warp. Per pass: the first stages' weight tiles go out before the pass's token
    // rows are known to be ready (weights are static, so the HBM stream starts at once), then the
    // rows' readiness counters are acquired, then their x rows and scales follow.
    int const epoch =
        args.ready_epoch_device != nullptr ? *args.ready_epoch_device : args.ready_epoch;
    bool wait_prior = args.overlap_previous;
    int it = 0;
    for (int pass = first_pass; pass < row_end; pass += passes * kN) {
      int const rows = min(kN, row_end - pass);
      auto const issue_weights = [&](int c) {
        int const s = (it + c) % kStages;
        std::uint32_t const full_bar = ptx::smem_address(&full[s]);
        ptx::mbarrier_wait(ptx::smem_address(&empty[s]),
                           (static_cast<std::uint32_t>((it + c) / kStages) & 1u) ^ 1u);
        std::uint32_t const stage = smem_base + static_cast<std::uint32_t>(s * kStageBytes);
        if (lane == 0) {
          ptx::mbarrier_arrive_expect_tx(full_bar, kWgs * kWgmmaChunkBytes);
#pragma unroll
          for (int w = 0; w < kWgs; ++w) {
            ptx::bulk_copy_g2s(stage + w * kWgmmaChunkBytes,
                               weights + ((tile0 + w) * chunks + c) * kWgmmaChunkBytes,
                               kWgmmaChunkBytes, full_bar);
          }
        }
      };
      auto const issue_tokens = [&](int c) {
        int const s = (it + c) % kStages;
        std::uint32_t const full_bar = ptx::smem_address(&full[s]);
        std::uint32_t const x_stage =
            smem_base + static_cast<std::uint32_t>(s * kStageBytes) + kWgs * kWgmmaChunkBytes;
        float* const stage_scales = scale_stages + s * kScaleFloats;
        // Unrolled at most twice: wider unrolling spills at the 8-row configs' 56-register
        // cap.
#pragma unroll(kN <= 8 ? 1 : 2)
        for (int u = lane; u < kN * 8; u += 32) {
          int const r = u / 8;
          int const unit = u % 8;
          std::uint32_t const dst = x_stage + r * kChunkK + ((unit ^ (r & 7)) << 4);
          bool const present = r < rows;
          std::uint8_t const* src =
              present ? args.x + (pass + r) * k_total + c * kChunkK + unit * 16 : args.x;
          ptx::copy_16_zfill(dst, src, present ? 16u : 0u);
        }
        // The rows' activation scales of chunk c (zeros past the rows).
        for (int r = lane; r < kN; r += 32) {
          bool const present = r < rows;
          float const* src =
              present ? args.x_scales + (pass + r) * static_cast<std::int64_t>(chunks) + c
                      : args.x_scales;
          ptx::copy_4_zfill(ptx::smem_address(stage_scales + r), src, present ? 4u : 0u);
        }
        // The tiles' weight scale_inv pairs, so no consumer waits on a global load.
        if (lane < kWgs) {
          ptx::copy_8(ptx::smem_address(stage_scales + kN + 2 * lane),
                      args.weight_scales + expert * args.scale_stride +
                          ((tile0 + lane) * chunks + c) * kWgmmaScalesPerTileChunk);
        }
        ptx::cp_async_arrive_noinc(full_bar);
      };
      int const early = min(kStages, chunks);
      for (int c = 0; c < early; ++c) {
        issue_weights(c);
      }
      if (wait_prior) {
        ptx::wait_prior_grid();  // x (L1's h) is the previous kernel's output
        wait_prior = false;
      }
      if (args.ready_blocks != nullptr) {
        wait_rows_ready(args, epoch, pass, rows, lane);
      }
      for (int c = 0; c < early; ++c) {
        issue_tokens(c);
      }
      for (int c = early; c < chunks; ++c) {
        issue_weights(c);
        issue_tokens(c);
      }
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
    consume_pass_trimmed<kN, kWgs, kStages>(acc, it, rows, view, [](int) {});

    finish_pass<kStage, kN, kConsumerThreads>(acc, args, pass, rows, tile, group, amax);
  }
}

}  // namespace gcmoe::kernels::fp8_wgmma
