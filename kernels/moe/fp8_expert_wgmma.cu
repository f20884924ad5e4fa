#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <algorithm>

#include "engine/common/cuda_check.h"
#include "kernels/hopper/ptx.cuh"
#include "kernels/moe/expert_rows_ready.cuh"
#include "kernels/moe/fp8_activation_math.cuh"
#include "kernels/moe/fp8_expert_wgmma.h"
#include "kernels/moe/fp8_expert_wgmma_layout.h"

namespace gcmoe::kernels {
namespace {

namespace ptx = hopper;

constexpr int kConsumerBarrier = 1;  // named barrier of the consumer warpgroups (0 = syncthreads)

template <int kWgs, int kN>
__host__ __device__ constexpr int stage_bytes() {
  return kWgs * kWgmmaChunkBytes + kN * kChunkK;
}

// kWgs consumer warpgroups (64 weight rows each) + one producer warp. kN token rows per pass.
// Passes of one expert's rows run as `passes` CTAs side by side (blockIdx.x = tile group ·
// passes + pass), so a wide batch re-reads a weight tile from L2 rather than HBM; a CTA whose
// pass starts past the expert's rows exits.
// kSubN: WGMMA N per instruction (a pass is kN / kSubN sub-tiles, each with its own chunk
// accumulator; sub-tiles past the expert's rows are skipped).
template <ExpertGemmStage kStage, int kWgs, int kN, int kSubN, int kStages, int kMinBlocks>
__global__ void __launch_bounds__((kWgs * 4 + 1) * 32, kMinBlocks)
    fp8_expert_wgmma_kernel(Fp8ExpertGemmArgs args, int passes) {
  static_assert(kN % 8 == 0 && kN >= 8 && kN <= 256);
  static_assert(kStage != ExpertGemmStage::kGateUp || kWgs * 32 == kChunkK,
                "L1 CTAs own one 128-output requantization group");
  constexpr int kStageBytes = stage_bytes<kWgs, kN>();
  static_assert(kStageBytes % 1024 == 0, "stages must keep the 1024-byte swizzle alignment");
  constexpr int kConsumerThreads = kWgs * 128;
  constexpr int kSubs = kN / kSubN;
  static_assert(kN % kSubN == 0 && (kSubs == 1 || kSubs == 2));
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
      // Wide passes: lane l copies the 16-byte unit l % 8 of rows l / 8 + 4i and the scales of
      // rows l + 32j; their addresses are made once per pass, so a chunk costs one add and one
      // cp.async per copy (the per-copy row arithmetic was ~450 producer instructions a chunk).
      constexpr bool kHoisted = kN >= 64;
      constexpr int kRowsPerLane = kHoisted ? kN / 4 : 1;
      constexpr int kScalesPerLane = kHoisted ? kN / 32 : 1;
      static_assert(kRowsPerLane <= 32);
      std::uint8_t const* row_src[kRowsPerLane];
      float const* scale_src[kScalesPerLane];
      unsigned row_present = 0;
      unsigned scale_present = 0;
      if constexpr (kHoisted) {
#pragma unroll
        for (int i = 0; i < kRowsPerLane; ++i) {
          int const r = lane / 8 + 4 * i;
          bool const present = r < rows;
          row_src[i] = present ? args.x + (pass + r) * k_total + (lane % 8) * 16 : args.x;
          row_present |= present ? 1u << i : 0u;
        }
#pragma unroll
        for (int j = 0; j < kScalesPerLane; ++j) {
          int const r = lane + 32 * j;
          bool const present = r < rows;
          scale_src[j] = present ? args.x_scales + (pass + r) * static_cast<std::int64_t>(chunks)
                                 : args.x_scales;
          scale_present |= present ? 1u << j : 0u;
        }
      }
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
        if constexpr (kHoisted) {
          // Row r = lane / 8 + 4i sits in swizzle phase r % 8 = lane / 8 + 4 (i % 2).
          int const r0 = lane / 8;
          int const unit = lane % 8;
          std::uint32_t const dst_even = x_stage + r0 * kChunkK + ((unit ^ r0) << 4);
          std::uint32_t const dst_odd = x_stage + r0 * kChunkK + ((unit ^ (r0 + 4)) << 4);
          std::int64_t const k_offset = static_cast<std::int64_t>(c) * kChunkK;
#pragma unroll
          for (int i = 0; i < kRowsPerLane; ++i) {
            // Absent rows copy nothing (zero fill); their pointer, args.x + k_offset, stays
            // inside x's first row.
            ptx::copy_16_zfill((i % 2 == 0 ? dst_even : dst_odd) + 4 * i * kChunkK,
                               row_src[i] + k_offset, (row_present >> i) & 1u ? 16u : 0u);
          }
#pragma unroll
          for (int j = 0; j < kScalesPerLane; ++j) {
            ptx::copy_4_zfill(ptx::smem_address(stage_scales + lane + 32 * j), scale_src[j] + c,
                              (scale_present >> j) & 1u ? 4u : 0u);
          }
        } else {
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
  int const wslice = warp % 4;
  int const g = lane / 4;
  int const t = lane % 4;
  std::int64_t const tile = tile0 + wg;

  int it = 0;
  for (int pass = first_pass; pass < row_end; pass += passes * kN) {
    int const rows = min(kN, row_end - pass);
    float acc[kN / 2];
#pragma unroll
    for (int i = 0; i < kN / 2; ++i) {
      acc[i] = 0.0f;
    }
    for (int c = 0; c < chunks; ++c, ++it) {
      int const s = it % kStages;
      std::uint32_t const round = static_cast<std::uint32_t>(it / kStages);
      ptx::mbarrier_wait(ptx::smem_address(&full[s]), round & 1u);
      ptx::fence_proxy_async_shared();
      std::uint32_t const stage = smem_base + static_cast<std::uint32_t>(s * kStageBytes);
      std::uint32_t const a_base = stage + wg * kWgmmaChunkBytes;
      std::uint32_t const b_base = stage + kWgs * kWgmmaChunkBytes;
      float const* const stage_scales = scale_stages + s * kScaleFloats;
      float2 const ws = *reinterpret_cast<float2 const*>(stage_scales + kN + 2 * wg);
      // The pass in sub-tiles of kSubN rows, each with its own chunk accumulator (kSubN/2
      // registers), all issued before the first wait; sub-tiles past the expert's rows are
      // skipped (an empty commit group keeps the wait counts uniform). One sub-tile is issued
      // unconditionally: behind a branch on `rows` ptxas serializes the WGMMAs (C7520).
      float part[kSubs][kSubN / 2];
      ptx::wgmma_fence();
#pragma unroll
      for (int sub = 0; sub < kSubs; ++sub) {
        if (kSubs == 1 || sub * kSubN < rows) {
#pragma unroll
          for (int k = 0; k < kChunkK / 32; ++k) {
            ptx::WgmmaFp8<kSubN>::run(part[sub], ptx::smem_desc_sw128(a_base + k * 32),
                                      ptx::smem_desc_sw128(b_base + sub * kSubN * kChunkK + k * 32),
                                      k > 0);
          }
        }
        ptx::wgmma_commit();
      }
#pragma unroll
      for (int sub = 0; sub < kSubs; ++sub) {
        if (sub + 1 < kSubs) {
          ptx::wgmma_wait<kSubs - 1>();
        } else {
          ptx::wgmma_wait<0>();
        }
        ptx::fence_accumulators<kSubN>(part[sub]);
        if (sub * kSubN < rows) {
#pragma unroll
          for (int jj = 0; jj < kSubN / 8; ++jj) {
            int const j = sub * (kSubN / 8) + jj;
            // The tokens' activation scales of this chunk (0 past the expert's rows).
            float const x0 = stage_scales[8 * j + 2 * t];
            float const x1 = stage_scales[8 * j + 2 * t + 1];
            acc[4 * j + 0] += part[sub][4 * jj + 0] * ws.x * x0;
            acc[4 * j + 1] += part[sub][4 * jj + 1] * ws.x * x1;
            acc[4 * j + 2] += part[sub][4 * jj + 2] * ws.y * x0;
            acc[4 * j + 3] += part[sub][4 * jj + 3] * ws.y * x1;
          }
        }
      }
      __syncwarp();
      if (lane == 0) {
        ptx::mbarrier_arrive(ptx::smem_address(&empty[s]));
      }
    }

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
}

// Configurations: L1 CTAs of 4 consumer warpgroups (128 outputs = one requantization group,
// 256 weight rows, 32 KB per stage), one per SM; L2 CTAs of 2 (128 hidden rows, 16 KB per
// stage), three per SM with 8 rows per pass. Stages fill ~200 KB of shared memory per SM.
// The wide configuration (64 rows per pass, v2.4) reads each weight tile once for up to 64 rows
// per expert: L1 at one CTA per SM (96 registers: a 32-register chunk accumulator and the
// 32-register sum; 5 stages of 40 KB), L2 at two per SM (91 registers, 4 stages of 24 KB).
// Measured slower (bench/NOTES.md, v2.4): an L2 prefetch of the next 4 or 8 chunks, 4-warpgroup
// L2 CTAs at one per SM, and one 128-row L2 pass at one CTA per SM.
template <ExpertGemmStage kStage, int kN>
struct Config;
// WGMMA N per instruction: the whole pass up to 32 rows (as before v2.4), 64 for the wide pass
// (one m64n64k32 per k-step: each 64×32 weight fragment is read from shared memory once, not once
// per 32-row sub-tile).
template <int kN>
inline constexpr int kSubNFor = kN <= 32 ? kN : 64;
template <int kN>
struct Config<ExpertGemmStage::kGateUp, kN> {
  static constexpr int kWgs = 4;
  static constexpr int kSubN = kSubNFor<kN>;
  // Up to 16 rows: two CTAs of 3 stages per SM, so a step's L1 CTAs (16 per expert) fit one
  // wave for up to 16 experts (8 routed + the shared one at T=1) instead of 8, and two per-chunk
  // WGMMA chains run per SM (one CTA per SM left the 16-row config short of the HBM rate on
  // fewer SMs). 32 rows spill at the 60-register cap of two CTAs: one per SM.
  static constexpr int kStages = kN <= 16 ? 3 : 5;
  static constexpr int kMinBlocks = kN <= 16 ? 2 : 1;
};
template <int kN>
struct Config<ExpertGemmStage::kDown, kN> {
  static constexpr int kWgs = 2;
  static constexpr int kSubN = kSubNFor<kN>;
  // Decode (8 rows): four CTAs of 3 stages per SM (48 per expert: 11 experts per wave).
  static constexpr int kStages = kN <= 8 ? 3 : 4;
  static constexpr int kMinBlocks = kN <= 8 ? 4 : (kN <= 16 ? 3 : 2);
};

template <ExpertGemmStage kStage, int kN>
constexpr auto kernel_for() {
  using C = Config<kStage, kN>;
  return fp8_expert_wgmma_kernel<kStage, C::kWgs, kN, C::kSubN, C::kStages, C::kMinBlocks>;
}

template <ExpertGemmStage kStage, int kN>
constexpr std::size_t smem_bytes() {
  using C = Config<kStage, kN>;
  // Stages, their scales, and up to 1024 bytes to align the first stage.
  return static_cast<std::size_t>(C::kStages) *
             (stage_bytes<C::kWgs, kN>() + (kN + 2 * C::kWgs) * sizeof(float)) +
         1024;
}

template <ExpertGemmStage kStage, int kN>
cudaError_t raise_smem_limit() {
  return cudaFuncSetAttribute(kernel_for<kStage, kN>(), cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(smem_bytes<kStage, kN>()));
}

// Passes run side by side for up to this many rows per expert; more rows loop inside the CTAs.
constexpr int kMaxParallelPasses = 8;

template <ExpertGemmStage kStage, int kN>
cudaError_t launch(Fp8ExpertGemmArgs const& args, cudaStream_t stream) {
  constexpr int kWgs = Config<kStage, kN>::kWgs;
  int const tiles64 = args.tiles * kTileRows / kWgmmaTileRows;
  int const hint = args.rows_per_expert_hint < 1 ? 1 : args.rows_per_expert_hint;
  int const passes = std::min((hint + kN - 1) / kN, kMaxParallelPasses);
  cudaLaunchConfig_t config{};
  config.gridDim =
      dim3(static_cast<unsigned>(tiles64 / kWgs * passes), static_cast<unsigned>(args.max_active));
  config.blockDim = dim3((kWgs * 4 + 1) * 32);
  config.dynamicSmemBytes = smem_bytes<kStage, kN>();
  config.stream = stream;
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  config.attrs = &attribute;
  config.numAttrs = args.overlap_previous ? 1 : 0;
  return cudaLaunchKernelEx(&config, kernel_for<kStage, kN>(), args, passes);
}

// Rows per pass: 8 for hints up to 8; 16 (two CTAs per SM) with parallel passes up to 32 rows
// (the extra pass re-reads the weight tiles from L2, which costs less than the 32-row config's
// one CTA per SM); 64 beyond (v2.4: where 3–6 parallel 16-row passes each re-read every tile,
// one or two 64-row passes do; GLM-5.2 one rank of eight, T=128 / 256: 549 → 536 / 920 → 822 µs).
constexpr int kWideHintRows = 32;

template <ExpertGemmStage kStage>
cudaError_t launch_for_rows(Fp8ExpertGemmArgs const& args, cudaStream_t stream) {
  int const hint = args.rows_per_expert_hint;
  if (hint <= 8) {
    return launch<kStage, 8>(args, stream);
  }
  if (hint <= kWideHintRows) {
    return launch<kStage, 16>(args, stream);
  }
  return launch<kStage, 64>(args, stream);
}

}  // namespace

Status preload_fp8_expert_wgmma() {
  GCMOE_CHECK_CUDA((raise_smem_limit<ExpertGemmStage::kGateUp, 8>()));
  GCMOE_CHECK_CUDA((raise_smem_limit<ExpertGemmStage::kGateUp, 16>()));
  GCMOE_CHECK_CUDA((raise_smem_limit<ExpertGemmStage::kGateUp, 64>()));
  GCMOE_CHECK_CUDA((raise_smem_limit<ExpertGemmStage::kDown, 8>()));
  GCMOE_CHECK_CUDA((raise_smem_limit<ExpertGemmStage::kDown, 16>()));
  GCMOE_CHECK_CUDA((raise_smem_limit<ExpertGemmStage::kDown, 64>()));
  return Status();
}

Status launch_fp8_expert_wgmma(Fp8ExpertGemmArgs const& args, cudaStream_t stream) {
  GCMOE_RETURN_IF_ERROR(check_expert_gemm_args(args));
  bool const gate_up = args.stage == ExpertGemmStage::kGateUp;
  // CTAs own 128 outputs (L1: 16 tiles of 8, one requantization group) or 128 rows (L2: 8 of 16).
  GCMOE_CHECK_ARG_MSG(args.tiles > 0 && args.tiles % (gate_up ? 16 : 8) == 0,
                      "fp8 expert wgmma: I and H must be positive multiples of 128");
  GCMOE_CHECK_ARG_MSG(args.rows_per_expert_hint <= (1 << 20), "fp8 expert wgmma: bad hint");
  GCMOE_CHECK_ARG_MSG(
      reinterpret_cast<std::uintptr_t>(args.weights) % 16 == 0 && args.weight_stride % 16 == 0,
      "fp8 expert wgmma: weights must be 16-byte aligned (bulk copies)");
  if (args.max_active <= 0) {
    return Status();
  }
  GCMOE_CHECK_CUDA(gate_up ? launch_for_rows<ExpertGemmStage::kGateUp>(args, stream)
                           : launch_for_rows<ExpertGemmStage::kDown>(args, stream));
  GCMOE_CHECK_LAUNCH();
  return Status();
}

}  // namespace gcmoe::kernels
