#pragma once
// The expert WGMMA kernels' pass epilogue, shared by the FP8 kernels (fp8_expert_wgmma_pass.cuh)
// and the MXFP4 kernel (mxfp4_expert_wgmma_kernel.cuh): both lay their sums out as WGMMA's
// m64nN accumulator (thread lane 4g + t of warp slice w holds rows 16w + g and + 8, columns
// 8j + 2t and + 1), L1 CTAs own one 128-output requantization group, L2 tiles are 64 rows.

#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/hopper/ptx.cuh"
#include "kernels/moe/expert_rows_done.cuh"
#include "kernels/moe/fp8_activation_math.cuh"
#include "kernels/moe/fp8_expert_gemm.h"
#include "kernels/moe/fp8_expert_layout.h"
#include "kernels/moe/fp8_expert_wgmma_layout.h"

namespace gcmoe::kernels::expert_epilogue {

inline constexpr int kConsumerBarrier = 1;  // named barrier of the consumer warpgroups (0 = sync)

// A pass's outputs from its sums: L2 writes bf16 y rows; L1 applies SwiGLU (and the routing
// weight), takes each row's amax over the CTA's 128 outputs and writes FP8 h with its scale.
// tid: the thread's index in the CTA (threadIdx.x; the MXFP4 kernel with feed warps passes a
// volatile %tid.x read, mxfp4_expert_wgmma_kernel.cuh says why).
template <ExpertGemmStage kStage, int kN, int kConsumerThreads>
__device__ __forceinline__ void finish_pass(float (&acc)[kN / 2], Fp8ExpertGemmArgs const& args,
                                            int pass, int rows, std::int64_t tile, int group,
                                            unsigned (&amax)[kN], int tid) {
  int const lane = tid % 32;
  int const wslice = tid / 32 % 4;
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
    // 1 / each column's group scale, computed once per column: a division, the group scale and
    // the h_scales store per value and lane made the FP8 96-row L1's epilogue ~1,950 instructions
    // per warp, 13.8% of its samples at one rank of eight T=256 (bench/NOTES.md v2.12).
    __shared__ float inv_scale[kN];
    hopper::named_barrier_sync(kConsumerBarrier, kConsumerThreads);  // last pass's reads are done
    for (int i = static_cast<int>(threadIdx.x); i < kN; i += kConsumerThreads) {
      amax[i] = 0u;
    }
    hopper::named_barrier_sync(kConsumerBarrier, kConsumerThreads);
    float hv[kN / 8][2];
#pragma unroll
    for (int j = 0; j < kN / 8; ++j) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        float v = swiglu_fast(acc[4 * j + e], acc[4 * j + 2 + e], limit);
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
    hopper::named_barrier_sync(kConsumerBarrier, kConsumerThreads);
    int const groups = inter / kChunkK;
    for (int col = static_cast<int>(threadIdx.x); col < kN; col += kConsumerThreads) {
      float const scale = fp8_group_scale(args.requant, __uint_as_float(amax[col]));
      inv_scale[col] = 1.0f / scale;
      if (col < rows) {
        args.h_scales[static_cast<std::int64_t>(pass + col) * groups + group] = scale;
      }
    }
    hopper::named_barrier_sync(kConsumerBarrier, kConsumerThreads);
#pragma unroll
    for (int j = 0; j < kN / 8; ++j) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        int const col = 8 * j + 2 * t + e;
        if (col < rows) {
          args.h[static_cast<std::int64_t>(pass + col) * inter + out] =
              fp8_encode_inv(hv[j][e], inv_scale[col]);
        }
      }
    }
    if (args.rows_done != nullptr) {
      static_assert(kConsumerThreads >= kN, "one consumer thread per row releases it");
      release_pass_rows(args, pass, rows, tid, kConsumerBarrier, kConsumerThreads);
    }
  }
}

}  // namespace gcmoe::kernels::expert_epilogue
