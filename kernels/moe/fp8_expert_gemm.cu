#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include "engine/common/cuda_check.h"
#include "kernels/hopper/ptx.cuh"
#include "kernels/moe/fp8_activation_math.cuh"
#include "kernels/moe/fp8_expert_gemm.h"
#include "kernels/moe/fp8_expert_layout.h"

namespace gcmoe::kernels {
namespace {

__device__ __forceinline__ std::uint32_t load_b(std::uint8_t const* p) {
  return __ldg(reinterpret_cast<std::uint32_t const*>(p));
}

// 16-byte global → shared copy that bypasses L1 (weights are read once).
__device__ __forceinline__ void copy_async_16(std::uint32_t smem_address, void const* global) {
  asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16;" ::"r"(smem_address),
               "l"(global));
}

__device__ __forceinline__ uint4 load_shared_16(std::uint32_t smem_address) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(smem_address));
  return v;
}

__device__ __forceinline__ void mma_fp8(float (&c)[4], uint4 const& a, std::uint32_t b0,
                                        std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b0), "r"(b1));
}

// Each warp streams its tile's chunks through a private ring of kStages 2 KB slots in shared
// memory (cp.async), a straight copy of the packed chunk: k-step s of lane l at s·512 + l·16, so
// the global reads are coalesced and the 16-byte reads back bank-conflict free. Every lane copies
// and reads only its own bytes, so cp.async.wait_group alone orders them (no barrier).
__device__ __forceinline__ void issue_chunk(std::uint32_t slot_address,
                                            std::uint8_t const* lane_weights, int c, int lane) {
  std::uint8_t const* src = lane_weights + static_cast<std::int64_t>(c) * kChunkBytes;
#pragma unroll
  for (int s = 0; s < 4; ++s) {
    copy_async_16(slot_address + s * 512 + lane * 16, src + s * 512);
  }
}

// kWarps: weight tiles per CTA (L1 needs 16: its requantization groups are 128 outputs).
// kNTiles: 8-row groups per pass (rows per pass = 8·kNTiles). kStages: chunks in flight per warp.
// Fewer row groups free registers for a deeper weight pipeline (decode: ≤ 8 rows per expert).
template <ExpertGemmStage kStage, int kWarps, int kNTiles, int kStages, int kMinBlocks>
__global__ void __launch_bounds__(kWarps * 32, kMinBlocks)
    fp8_expert_gemm_kernel(Fp8ExpertGemmArgs args) {
  static_assert(kStages >= 2, "the ring needs a slot in flight and one being read");
  constexpr int kMaxRows = 8 * kNTiles;
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ unsigned amax[kMaxRows];
  int const slot = static_cast<int>(blockIdx.y);
  if (slot >= *args.num_active) {
    return;
  }
  int const expert = args.active_experts[slot];
  int const row_begin = args.expert_offsets[expert];
  int const row_end = args.expert_offsets[expert + 1];
  int const warp = static_cast<int>(threadIdx.x) / 32;
  int const lane = static_cast<int>(threadIdx.x) % 32;
  int const g = lane / 4;
  int const t = lane % 4;
  int const chunks = args.chunks;
  std::int64_t const k_total = static_cast<std::int64_t>(chunks) * kChunkK;
  std::int64_t const tile = static_cast<std::int64_t>(blockIdx.x) * kWarps + warp;

  auto const ring =
      static_cast<std::uint32_t>(__cvta_generic_to_shared(smem + warp * kStages * kChunkBytes));
  std::uint8_t const* const weights =
      args.weights + expert * args.weight_stride + tile * chunks * kChunkBytes + lane * 16;
  float const* const scales =
      args.weight_scales + expert * args.scale_stride + tile * chunks * kScalesPerTileChunk;

  for (int pass = row_begin; pass < row_end; pass += kMaxRows) {
    int const rows = min(kMaxRows, row_end - pass);
    int const n_tiles = (rows + 7) / 8;
    if constexpr (kStage == ExpertGemmStage::kGateUp) {
      __syncthreads();  // the previous pass's epilogue is done reading amax
      if (threadIdx.x < kMaxRows) {
        amax[threadIdx.x] = 0u;
      }
      __syncthreads();
    }
    // This lane's B-fragment row of each 8-row group (null past the last row: zeros).
    std::uint8_t const* x_row[kNTiles];
#pragma unroll
    for (int n = 0; n < kNTiles; ++n) {
      int const r = 8 * n + g;
      x_row[n] = r < rows ? args.x + (pass + r) * k_total + 4 * t : nullptr;
    }

    float2 wscale[kStages];
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
      if (s < chunks) {
        issue_chunk(ring + s * kChunkBytes, weights, s, lane);
        wscale[s] = __ldg(reinterpret_cast<float2 const*>(scales) + s);
      }
      hopper::cp_async_commit();
    }

    float acc[kNTiles][4] = {};
    for (int c0 = 0; c0 < chunks; c0 += kStages) {
#pragma unroll
      for (int s = 0; s < kStages; ++s) {
        int const c = c0 + s;
        if (c < chunks) {
          hopper::cp_async_wait<kStages - 2>();  // chunk c has landed in slot s
          int const next = c + kStages - 1;
          int const next_slot = (s + kStages - 1) % kStages;  // a constant once unrolled
          if (next < chunks) {
            issue_chunk(ring + next_slot * kChunkBytes, weights, next, lane);
            wscale[next_slot] = __ldg(reinterpret_cast<float2 const*>(scales) + next);
          }
          hopper::cp_async_commit();
          uint4 a[4];
#pragma unroll
          for (int step = 0; step < 4; ++step) {
            a[step] = load_shared_16(ring + s * kChunkBytes + step * 512 + lane * 16);
          }
          float part[kNTiles][4] = {};
#pragma unroll
          for (int n = 0; n < kNTiles; ++n) {
            if (n < n_tiles) {
#pragma unroll
              for (int step = 0; step < 4; ++step) {
                std::uint32_t b0 = 0;
                std::uint32_t b1 = 0;
                if (x_row[n] != nullptr) {
                  std::uint8_t const* b = x_row[n] + c * kChunkK + step * 32;
                  b0 = load_b(b);
                  b1 = load_b(b + 16);
                }
                mma_fp8(part[n], a[step], b0, b1);
              }
            }
          }
#pragma unroll
          for (int n = 0; n < kNTiles; ++n) {
            int const r0 = 8 * n + 2 * t;
            float const x0 =
                r0 < rows
                    ? __ldg(args.x_scales + (pass + r0) * static_cast<std::int64_t>(chunks) + c)
                    : 0.0f;
            float const x1 =
                r0 + 1 < rows
                    ? __ldg(args.x_scales + (pass + r0 + 1) * static_cast<std::int64_t>(chunks) + c)
                    : 0.0f;
            acc[n][0] += part[n][0] * wscale[s].x * x0;
            acc[n][1] += part[n][1] * wscale[s].x * x1;
            acc[n][2] += part[n][2] * wscale[s].y * x0;
            acc[n][3] += part[n][3] * wscale[s].y * x1;
          }
        }
      }
    }
    hopper::cp_async_wait<0>();

    if constexpr (kStage == ExpertGemmStage::kDown) {
      int const hidden = args.tiles * kTileRows;
      int const row = static_cast<int>(tile) * kTileRows + g;
#pragma unroll
      for (int n = 0; n < kNTiles; ++n) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          int const col = 8 * n + 2 * t + (i & 1);
          if (col < rows) {
            __nv_bfloat16 const v = __float2bfloat16_rn(acc[n][i]);
            args.y[static_cast<std::int64_t>(pass + col) * hidden + row + (i >= 2 ? 8 : 0)] =
                __bfloat16_as_ushort(v);
          }
        }
      }
    } else {
      // Thread holds gate (i = 0, 1) and up (i = 2, 3) of output `out` for tokens col0, col1.
      int const inter = args.tiles * 8;
      int const out = static_cast<int>(tile) * 8 + g;
      float const limit = args.swiglu_limit;
      static_assert(kStage != ExpertGemmStage::kGateUp || kWarps * 8 == kChunkK,
                    "L1 CTAs own one 128-output requantization group");
      float hv[kNTiles][2];
#pragma unroll
      for (int n = 0; n < kNTiles; ++n) {
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          float v = swiglu(acc[n][j], acc[n][2 + j], limit);
          int const col = 8 * n + 2 * t + j;
          if (args.route_weights != nullptr && col < rows) {
            v *= args.route_weights[pass + col];
          }
          hv[n][j] = v;
          // amax over the CTA's 128 outputs: first the 8 lanes that share t, then the warps.
          float m = fabsf(v);
          m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 4));
          m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 8));
          m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 16));
          if (g == 0 && col < rows) {
            atomicMax(&amax[col], __float_as_uint(m));
          }
        }
      }
      __syncthreads();
      int const groups = inter / kChunkK;
#pragma unroll
      for (int n = 0; n < kNTiles; ++n) {
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          int const col = 8 * n + 2 * t + j;
          if (col < rows) {
            float const a = __uint_as_float(amax[col]);
            float const scale = fp8_group_scale(args.requant, a);
            std::int64_t const r = pass + col;
            args.h[r * inter + out] = fp8_encode(hv[n][j], scale);
            if (warp == 0 && g == 0) {
              args.h_scales[r * groups + blockIdx.x] = scale;
            }
          }
        }
      }
    }
  }
}

// Dynamic shared memory: one ring of kStages 2 KB slots per warp.
constexpr std::size_t ring_bytes(int warps, int stages) {
  return static_cast<std::size_t>(warps) * stages * kChunkBytes;
}

// K is only bounded by the packed layout (int offsets): the x rows are read from global memory.
constexpr int kMaxChunks = 1 << 16;

// The four configurations. L1 keeps 16 warps (one requantization group per CTA). L2 uses 8-warp
// CTAs: with one row group it needs ≤ 85 registers, so three CTAs (24 warps, 4-slot rings, 192 KB)
// share an SM and a decode step's L2 warp-tiles fit in one wave (T=1, GLM-5.2: 8 experts × 384
// tiles = 3072 ≤ 132 × 24); with four row groups (128 registers) two CTAs with 6-slot rings.
template <ExpertGemmStage kStage, int kNTiles>
struct Config;
template <int kNTiles>
struct Config<ExpertGemmStage::kGateUp, kNTiles> {
  static constexpr int kWarps = 16;
  static constexpr int kStages = 6;
  static constexpr int kMinBlocks = 1;
};
template <>
struct Config<ExpertGemmStage::kDown, 1> {
  static constexpr int kWarps = 8;
  static constexpr int kStages = 4;
  static constexpr int kMinBlocks = 3;
};
template <>
struct Config<ExpertGemmStage::kDown, 4> {
  static constexpr int kWarps = 8;
  static constexpr int kStages = 6;
  static constexpr int kMinBlocks = 2;
};

template <ExpertGemmStage kStage, int kNTiles>
constexpr auto kernel_for() {
  using C = Config<kStage, kNTiles>;
  return fp8_expert_gemm_kernel<kStage, C::kWarps, kNTiles, C::kStages, C::kMinBlocks>;
}

template <ExpertGemmStage kStage, int kNTiles>
constexpr std::size_t config_ring_bytes() {
  return ring_bytes(Config<kStage, kNTiles>::kWarps, Config<kStage, kNTiles>::kStages);
}

template <ExpertGemmStage kStage, int kNTiles>
cudaError_t raise_smem_limit() {
  return cudaFuncSetAttribute(kernel_for<kStage, kNTiles>(),
                              cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(config_ring_bytes<kStage, kNTiles>()));
}

template <ExpertGemmStage kStage, int kNTiles>
void launch(Fp8ExpertGemmArgs const& args, cudaStream_t stream) {
  constexpr int kWarps = Config<kStage, kNTiles>::kWarps;
  dim3 const grid(static_cast<unsigned>(args.tiles / kWarps),
                  static_cast<unsigned>(args.max_active));
  kernel_for<kStage,
             kNTiles>()<<<grid, kWarps * 32, config_ring_bytes<kStage, kNTiles>(), stream>>>(args);
}

}  // namespace

Status preload_fp8_expert_gemm() {
  GCMOE_CHECK_CUDA((raise_smem_limit<ExpertGemmStage::kGateUp, 1>()));
  GCMOE_CHECK_CUDA((raise_smem_limit<ExpertGemmStage::kGateUp, 4>()));
  GCMOE_CHECK_CUDA((raise_smem_limit<ExpertGemmStage::kDown, 1>()));
  GCMOE_CHECK_CUDA((raise_smem_limit<ExpertGemmStage::kDown, 4>()));
  return Status();
}

Status check_expert_gemm_args(Fp8ExpertGemmArgs const& args) {
  GCMOE_CHECK_ARG_MSG(args.weights != nullptr && args.weight_scales != nullptr &&
                          args.x != nullptr && args.x_scales != nullptr,
                      "fp8 expert gemm: a required pointer is null");
  GCMOE_CHECK_ARG_MSG(
      args.fixed_expert >= 0 || (args.expert_offsets != nullptr && args.active_experts != nullptr &&
                                 args.num_active != nullptr),
      "fp8 expert gemm: expert offsets and the active list are required");
  GCMOE_CHECK_ARG_MSG(args.fixed_expert < 0 || (args.fixed_rows >= 0 && args.max_active <= 1),
                      "fp8 expert gemm: a fixed expert has rows >= 0 and one grid row");
  GCMOE_CHECK_ARG_MSG(args.chunks > 0 && args.chunks <= kMaxChunks,
                      "fp8 expert gemm: K must be a positive multiple of 128");
  bool const gate_up = args.stage == ExpertGemmStage::kGateUp;
  GCMOE_CHECK_ARG_MSG(!gate_up || (args.h != nullptr && args.h_scales != nullptr),
                      "fp8 expert gemm: gate/up stage needs h and h_scales");
  GCMOE_CHECK_ARG_MSG(gate_up || args.y != nullptr, "fp8 expert gemm: down stage needs y");
  GCMOE_CHECK_ARG_MSG(
      args.ready_blocks == nullptr || (args.ready_block_rows > 0 && args.error != nullptr),
      "fp8 expert gemm: readiness counters need ready_block_rows and error");
  GCMOE_CHECK_ARG_MSG(args.rows_done == nullptr || gate_up,
                      "fp8 expert gemm: rows_done is released by L1 (the gate/up stage)");
  GCMOE_CHECK_ARG_MSG(
      !args.x_ready_by_rows || (!gate_up && args.overlap_previous && args.ready_blocks != nullptr &&
                                args.ready_block_rows == 1),
      "fp8 expert gemm: x_ready_by_rows is an L2 launched by PDL over L1's "
      "rows_done (ready_blocks, ready_block_rows 1)");
  return Status();
}

Status launch_fp8_expert_gemm(Fp8ExpertGemmArgs const& args, cudaStream_t stream) {
  GCMOE_RETURN_IF_ERROR(check_expert_gemm_args(args));
  GCMOE_CHECK_ARG_MSG(
      args.ready_blocks == nullptr && args.fixed_expert < 0 && args.rows_done == nullptr &&
          args.work_counters == nullptr,
      "fp8 expert gemm: readiness counters, rows_done, a fixed expert and work counters need the "
      "WGMMA version");
  GCMOE_CHECK_ARG_MSG(args.tiles > 0 && args.tiles % kExpertGemmWarps == 0,
                      "fp8 expert gemm: tiles must be a positive multiple of 16");
  bool const gate_up = args.stage == ExpertGemmStage::kGateUp;
  if (args.max_active <= 0) {
    return Status();
  }
  bool const one_group = args.rows_per_expert_hint <= 8;
  if (gate_up) {
    one_group ? launch<ExpertGemmStage::kGateUp, 1>(args, stream)
              : launch<ExpertGemmStage::kGateUp, 4>(args, stream);
  } else {
    one_group ? launch<ExpertGemmStage::kDown, 1>(args, stream)
              : launch<ExpertGemmStage::kDown, 4>(args, stream);
  }
  GCMOE_CHECK_LAUNCH();
  return Status();
}

}  // namespace gcmoe::kernels
