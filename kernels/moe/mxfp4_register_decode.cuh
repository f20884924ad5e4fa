#pragma once
// Device helpers of the MXFP4 expert GEMM (kernels/moe/mxfp4_expert_wgmma.cu): the in-register
// decode of e2m1 code words to e4m3 bytes (layout: kernels/moe/mxfp4_expert_wgmma_layout.h, whose
// mxfp4_wgmma_kernel_weight is the CPU twin), the row scales, and the loop's shared-memory loads.

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/moe/mxfp4_expert_wgmma_layout.h"

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
__device__ __forceinline__ std::uint32_t load_shared_4(std::uint32_t address) {
  std::uint32_t v;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(address));
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

// 2^(e - 133) for an e8m0 byte e (0..254): the f32 factor left after the decode's 2^(6 + d); the
// smallest bytes give f32 subnormals (exact; the build does not flush them).
__device__ __forceinline__ float pow2_scale(std::uint32_t e) {
  return __uint_as_float(e >= 7u ? (e - 6u) << 23 : 1u << (e + 16u));
}

// e4m3 bytes of one code word (layout header): A = the register whose magnitudes are nibbles
// 0..3 and signs the odd nibbles' bit 3, B = nibbles 4..7 with the even nibbles' signs.
struct Lut {
  std::uint32_t lo;
  std::uint32_t hi;
};
__device__ __forceinline__ Lut lut_for(std::uint32_t u) {
  return {kMxLutLo + u * 0x08080800u, kMxLutHi + u * 0x08080808u};
}
// 7 ALU instructions (LOP3 mask, PRMT, LOP3 sign; SHF, LOP3 mask, PRMT, LOP3 sign) and one
// IMAD.SHL per 8 values: SASS PRMT needs the selector's high half clear, so ptxas masks each
// selector with 0x7777 on its own.
__device__ __forceinline__ void decode_word(std::uint32_t word, Lut lut, std::uint32_t& a,
                                            std::uint32_t& b) {
  std::uint32_t const magnitudes = word & 0x77777777u;
  a = __byte_perm(lut.lo, lut.hi, magnitudes) | (word & 0x80808080u);
  b = __byte_perm(lut.lo, lut.hi, magnitudes >> 16) | ((word << 4) & 0x80808080u);
}

// u_s of a narrow row word (layout header): bits 16 + 4s; the top one needs no mask.
__device__ __forceinline__ std::uint32_t narrow_ratio(std::uint32_t word, int step) {
  return step == 3 ? word >> 28 : (word >> (16 + 4 * step)) & 0xfu;
}

// Registers of k-step `step` from the thread's two 16-byte code units.
__device__ __forceinline__ void decode_step(uint4 const& q0, uint4 const& q1, int step, Lut lg,
                                            Lut lg8, std::uint32_t (&a)[4]) {
  std::uint32_t const wg = step == 0 ? q0.x : step == 1 ? q0.z : step == 2 ? q1.x : q1.z;
  std::uint32_t const wg8 = step == 0 ? q0.y : step == 1 ? q0.w : step == 2 ? q1.y : q1.w;
  decode_word(wg, lg, a[0], a[2]);
  decode_word(wg8, lg8, a[1], a[3]);
}

}  // namespace gcmoe::kernels::mxfp4_decode
