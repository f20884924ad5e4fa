#pragma once
// Device helpers of the MXFP4 expert GEMM (kernels/moe/mxfp4_expert_wgmma.cu): the in-register
// decode of e2m1 code words to e4m3 bytes by table (layout:
// kernels/moe/mxfp4_expert_wgmma_layout.h, whose mxfp4_wgmma_kernel_weight is the CPU twin), the
// k-step scales, and the loop's shared-memory loads.

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/moe/mxfp4_expert_wgmma_layout.h"
#include "kernels/moe/mxfp4_window_table.h"

namespace gcmoe::kernels::mxfp4_decode {

// Shared-memory loads by 32-bit address (keeps the hoisted stage addresses in one register each);
// volatile so that they stay after the stage's mbarrier wait.
__device__ __forceinline__ uint4 load_shared_16(std::uint32_t address) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(address));
  return v;
}
__device__ __forceinline__ uint2 load_shared_8(std::uint32_t address) {
  uint2 v;
  asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "r"(address));
  return v;
}

// %ctaid.x (0) or %tid.x (1) by a volatile read, which the compiler cannot hoist out of a loop.
template <int kWhich>
__device__ __forceinline__ std::uint32_t read_special() {
  std::uint32_t v;
  if constexpr (kWhich == 0) {
    asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(v));
  } else {
    asm volatile("mov.u32 %0, %%tid.x;" : "=r"(v));
  }
  return v;
}

// Byte permute (PTX prmt, default mode): byte i of the result is byte (sel >> 4i) & 7 of {b, a}
// (a: bytes 0..3). The selectors' bit 3 must be clear (it would replicate the sign).
__device__ __forceinline__ std::uint32_t prmt(std::uint32_t a, std::uint32_t b, std::uint32_t sel) {
  std::uint32_t d;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(sel));
  return d;
}

// e4m3 bytes of one code word (layout header, version 6) through `table` (8 e4m3 magnitudes,
// mxfp4_window_table.h): `first` the register whose magnitudes are the word's nibbles 0..3 and
// signs bits 8p + 7, `second` nibbles 4..7 and bits 8p + 3. Seven instructions.
__device__ __forceinline__ void decode_word(std::uint32_t word, uint2 table, std::uint32_t& first,
                                            std::uint32_t& second) {
  std::uint32_t const magnitude = word & kMxMagnitudeMask;
  first = prmt(table.x, table.y, magnitude) | (word & kMxSignMask);
  second = prmt(table.x, table.y, magnitude >> 16) | ((word << 4) & kMxSignMask);
}

// Registers of k-step `step` from the thread's two 16-byte code units, rows g and g + 8 through
// their tables.
__device__ __forceinline__ void decode_step(uint4 const& q0, uint4 const& q1, int step,
                                            uint2 table_g, uint2 table_g8, std::uint32_t (&a)[4]) {
  std::uint32_t const wg = step == 0 ? q0.x : step == 1 ? q0.z : step == 2 ? q1.x : q1.z;
  std::uint32_t const wg8 = step == 0 ? q0.y : step == 1 ? q0.w : step == 2 ? q1.y : q1.w;
  decode_word(wg, table_g, a[0], a[2]);
  decode_word(wg8, table_g8, a[1], a[3]);
}

// The shared address of a windowed row's table for k-step `step`: byte `step` of its scale word
// (8 d) over the table's 256-aligned base, one byte permute.
__device__ __forceinline__ std::uint32_t window_table_at(std::uint32_t scale_word,
                                                         std::uint32_t table_base, int step) {
  return prmt(scale_word, table_base, 0x7650u + static_cast<std::uint32_t>(step));
}

// A fallback tile's f32 factor 2^(b - 121) of k-step `step` from a row's scale word (stored byte b
// + 6 at bits 8 step.. 8 step + 7): the byte shifted into the exponent field, one shift and one
// mask.
__device__ __forceinline__ float step_scale(std::uint32_t word, int step) {
  std::uint32_t const shifted = step == 3 ? word >> 1 : word << (23 - 8 * step);
  return __uint_as_float(shifted & 0x7f800000u);
}

// Folds one k-step's accumulator (kCount values of WGMMA's layout: i % 4 < 2 row g, else row g
// + 8) into the chunk's sum with the rows' factors 2^(b - 121) from their scale words; k-step 0
// starts the sum.
template <int kCount>
__device__ __forceinline__ void fold_k_step(float* sum, float const (&part)[kCount],
                                            uint2 scale_words, int step) {
  float const f_g = step_scale(scale_words.x, step);
  float const f_g8 = step_scale(scale_words.y, step);
#pragma unroll
  for (int i = 0; i < kCount; ++i) {
    float const f = i % 4 < 2 ? f_g : f_g8;
    sum[i] = step == 0 ? part[i] * f : fmaf(part[i], f, sum[i]);
  }
}

// acc += chunk_sum × the tokens' activation scales of the chunk, in WGMMA's m64nN accumulator
// layout (thread t holds columns 8j + 2t and + 1); x_scales: the shared address of the chunk's
// scale of column 2t (one f32 per token row). acc: the first kN / 2 of a pass's accumulators
// (a narrower WGMMA's layout is a prefix of the wider one's).
template <int kN>
__device__ __forceinline__ void add_token_scaled(float* acc, float const (&chunk_sum)[kN / 2],
                                                 std::uint32_t x_scales) {
#pragma unroll
  for (int j = 0; j < kN / 8; ++j) {
    uint2 const x = load_shared_8(x_scales + 32 * j);
    float const x0 = __uint_as_float(x.x);
    float const x1 = __uint_as_float(x.y);
    acc[4 * j + 0] = fmaf(chunk_sum[4 * j + 0], x0, acc[4 * j + 0]);
    acc[4 * j + 1] = fmaf(chunk_sum[4 * j + 1], x1, acc[4 * j + 1]);
    acc[4 * j + 2] = fmaf(chunk_sum[4 * j + 2], x0, acc[4 * j + 2]);
    acc[4 * j + 3] = fmaf(chunk_sum[4 * j + 3], x1, acc[4 * j + 3]);
  }
}

}  // namespace gcmoe::kernels::mxfp4_decode
