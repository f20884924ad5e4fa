#include <cstddef>
#include <cstdint>

#include "kernels/hopper/pdl_launch.h"
#include "kernels/hopper/ptx.cuh"
#include "kernels/moe/router_logits_mma.h"

namespace gcmoe::kernels {
namespace {

constexpr int kThreads = 128;  // 4 warps, 2 x 2 over the block's 64 x 64 outputs
constexpr int kWarpT = 32;     // a warp's tokens: two m16 MMA rows
constexpr int kWarpE = 32;     // a warp's experts: four n8 MMA columns
// Shared rows padded by 4 floats: a fragment load (8 rows x 4 consecutive k per warp) then hits
// 32 distinct banks.
constexpr int kRowFloats = kRouterMmaTileK + 4;
constexpr int kVectorsPerTile = kRouterMmaTileT * kRouterMmaTileK / 4;  // 16-byte copies
static_assert(kRouterMmaTileT == kRouterMmaTileE, "one loader for both tiles");
static_assert(kVectorsPerTile % kThreads == 0);

struct Tf32Pair {
  std::uint32_t hi;
  std::uint32_t lo;
};

// v = hi + lo, each rounded to TF32 (to nearest, ties away): hi holds v's top 11 significand bits,
// lo the next 11.
__device__ __forceinline__ Tf32Pair split_tf32(float const v) {
  Tf32Pair p;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(p.hi) : "f"(v));
  float const rest = v - __uint_as_float(p.hi);
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(p.lo) : "f"(rest));
  return p;
}

// d += a · b, m16n8k8, A row-major (tokens x k), B column-major (k x experts), f32 accumulate.
__device__ __forceinline__ void mma_tf32(float (&d)[4], std::uint32_t const (&a)[4],
                                         std::uint32_t const (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// 64 rows x 32 k of a row-major [rows, hidden] matrix into shared memory; rows past `rows` and k
// past k_end (a multiple of 4) read as zeros.
__device__ __forceinline__ void load_tile(float (*dst)[kRowFloats], float const* __restrict__ src,
                                          int row0, int rows, int hidden, int k0, int k_end) {
  int const tid = static_cast<int>(threadIdx.x);
#pragma unroll
  for (int i = 0; i < kVectorsPerTile / kThreads; ++i) {
    int const v = tid + i * kThreads;
    int const row = v / (kRouterMmaTileK / 4);
    int const col = (v % (kRouterMmaTileK / 4)) * 4;
    int const r = row0 + row;
    int const k = k0 + col;
    bool const in = r < rows && k < k_end;
    float const* const from = src + (in ? static_cast<std::size_t>(r) * hidden + k : 0);
    hopper::copy_16_zfill(hopper::smem_address(&dst[row][col]), from, in ? 16u : 0u);
  }
}

__global__ void __launch_bounds__(kThreads)
    router_logits_mma_kernel(float const* __restrict__ x, float const* __restrict__ w, int tokens,
                             int hidden, int experts, int k_per_split, float* __restrict__ partial,
                             bool chained) {
  hopper::enter_launch_chain(chained);
  // Two stages: the next k-tile's copies are in flight during this one's MMAs.
  __shared__ __align__(16) float xs[2][kRouterMmaTileT][kRowFloats];
  __shared__ __align__(16) float ws[2][kRouterMmaTileE][kRowFloats];
  int const warp = static_cast<int>(threadIdx.x) / 32;
  int const lane = static_cast<int>(threadIdx.x) % 32;
  int const group = lane / 4;  // the MMA fragments' row (A, C) or column (B) within 8
  int const quad = lane % 4;   // ... and k (A, B) or column pair (C)
  int const warp_t = (warp / 2) * kWarpT;
  int const warp_e = (warp % 2) * kWarpE;
  int const t0 = static_cast<int>(blockIdx.y) * kRouterMmaTileT;
  int const e0 = static_cast<int>(blockIdx.x) * kRouterMmaTileE;
  int const k_begin = static_cast<int>(blockIdx.z) * k_per_split;
  int const k_end = min(hidden, k_begin + k_per_split);
  int const k_tiles = (k_end - k_begin + kRouterMmaTileK - 1) / kRouterMmaTileK;

  float acc[2][4][4] = {};
  load_tile(xs[0], x, t0, tokens, hidden, k_begin, k_end);
  load_tile(ws[0], w, e0, experts, hidden, k_begin, k_end);
  hopper::cp_async_commit();
  for (int i = 0; i < k_tiles; ++i) {
    int const s = i & 1;
    if (i + 1 < k_tiles) {
      int const k_next = k_begin + (i + 1) * kRouterMmaTileK;
      load_tile(xs[s ^ 1], x, t0, tokens, hidden, k_next, k_end);
      load_tile(ws[s ^ 1], w, e0, experts, hidden, k_next, k_end);
      hopper::cp_async_commit();
      hopper::cp_async_wait<1>();
    } else {
      hopper::cp_async_wait<0>();
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kRouterMmaTileK; kk += 8) {
      std::uint32_t a_hi[2][4];
      std::uint32_t a_lo[2][4];
#pragma unroll
      for (int m = 0; m < 2; ++m) {
        int const r = warp_t + m * 16 + group;
        // Fragment order: (r, k), (r + 8, k), (r, k + 4), (r + 8, k + 4).
        float const v[4] = {xs[s][r][kk + quad], xs[s][r + 8][kk + quad], xs[s][r][kk + quad + 4],
                            xs[s][r + 8][kk + quad + 4]};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          Tf32Pair const p = split_tf32(v[j]);
          a_hi[m][j] = p.hi;
          a_lo[m][j] = p.lo;
        }
      }
#pragma unroll
      for (int n = 0; n < 4; ++n) {
        int const e = warp_e + n * 8 + group;
        Tf32Pair const b0 = split_tf32(ws[s][e][kk + quad]);
        Tf32Pair const b1 = split_tf32(ws[s][e][kk + quad + 4]);
        std::uint32_t const b_hi[2] = {b0.hi, b1.hi};
        std::uint32_t const b_lo[2] = {b0.lo, b1.lo};
#pragma unroll
        for (int m = 0; m < 2; ++m) {
          // The small cross terms first, the large product last.
          mma_tf32(acc[m][n], a_lo[m], b_hi);
          mma_tf32(acc[m][n], a_hi[m], b_lo);
          mma_tf32(acc[m][n], a_hi[m], b_hi);
        }
      }
    }
    __syncthreads();  // the stage is refilled next iteration
  }

  float* const out = partial + static_cast<std::size_t>(blockIdx.z) * tokens * experts;
#pragma unroll
  for (int m = 0; m < 2; ++m) {
#pragma unroll
    for (int n = 0; n < 4; ++n) {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        // Accumulator order: (row, col), (row, col + 1), (row + 8, col), (row + 8, col + 1).
        int const t = t0 + warp_t + m * 16 + group + (j / 2) * 8;
        int const e = e0 + warp_e + n * 8 + quad * 2 + (j % 2);
        if (t < tokens && e < experts) {
          out[static_cast<std::size_t>(t) * experts + e] = acc[m][n][j];
        }
      }
    }
  }
}

}  // namespace

bool router_mma_supported(float const* x, float const* w, int hidden) {
  return hidden % 4 == 0 && reinterpret_cast<std::uintptr_t>(x) % 16 == 0 &&
         reinterpret_cast<std::uintptr_t>(w) % 16 == 0;
}

cudaError_t launch_router_logits_mma(float const* x, float const* w, int tokens, int hidden,
                                     int experts, int k_per_split, int splits, float* partial,
                                     cudaStream_t stream, bool chained) {
  dim3 const grid(static_cast<unsigned>((experts + kRouterMmaTileE - 1) / kRouterMmaTileE),
                  static_cast<unsigned>((tokens + kRouterMmaTileT - 1) / kRouterMmaTileT),
                  static_cast<unsigned>(splits));
  return hopper::launch_with_pdl(router_logits_mma_kernel, grid, dim3(kThreads), 0, stream, chained,
                                 x, w, tokens, hidden, experts, k_per_split, partial, chained);
}

}  // namespace gcmoe::kernels
