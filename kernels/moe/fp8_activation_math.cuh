#pragma once
// Device-side FP8 activation recipe and SwiGLU shared by the expert GEMMs' L1 epilogues
// (fp8_expert_gemm.cu, fp8_expert_wgmma.cu) and the dispatch (moe_local_dispatch.cu). CPU
// twins: formats::group_scale / encode_e4m3 (engine/formats/activation_quant.cc) and
// kernels/moe/expert_ffn_ref.cc.

#include <cuda_fp8.h>

#include <cstdint>

#include "kernels/moe/fp8_expert_gemm.h"

namespace gcmoe::kernels {

// ceil(log2(v)) for a positive normal float, from its bits (as formats::log2_ceil).
__device__ __forceinline__ int log2_ceil(float v) {
  unsigned const bits = __float_as_uint(v);
  int const exponent = static_cast<int>((bits >> 23) & 0xff) - 127;
  return (bits & 0x7fffff) != 0 ? exponent + 1 : exponent;
}

// The scale of a 128-value group with absolute maximum `amax`: a power of two (DeepSeek ue8m0,
// amax floored at 1e-4) or amax / 448 (GLM-5.2, floored at 1e-10).
__device__ __forceinline__ float fp8_group_scale(RequantScale recipe, float amax) {
  return recipe == RequantScale::kPow2
             ? exp2f(static_cast<float>(log2_ceil(fmaxf(amax, 1e-4f) * (1.0f / 448.0f))))
             : fmaxf(amax, 1e-10f) / 448.0f;
}

// e4m3 code of v / scale, saturated to ±448 (round to nearest even).
__device__ __forceinline__ std::uint8_t fp8_encode(float v, float scale) {
  __nv_fp8_e4m3 const code(fminf(fmaxf(v / scale, -448.0f), 448.0f));
  return code.__x;
}

// e4m3 code of v · inv_scale, saturated to ±448: fp8_encode with the group's inverse scale
// (1 / scale, computed once per group) instead of a division per value. Equal to fp8_encode for
// power-of-two scales; otherwise v · (1 / scale) may differ from v / scale in the last bit of
// the f32 before rounding to e4m3.
__device__ __forceinline__ std::uint8_t fp8_encode_inv(float v, float inv_scale) {
  __nv_fp8_e4m3 const code(fminf(fmaxf(v * inv_scale, -448.0f), 448.0f));
  return code.__x;
}

// DeepSeek's SwiGLU clamp when limit > 0: up to ±limit, gate to ≤ limit.
__device__ __forceinline__ void clamp_swiglu_inputs(float& gate, float& up, float limit) {
  if (limit > 0.0f) {
    up = fminf(fmaxf(up, -limit), limit);
    gate = fminf(gate, limit);
  }
}

// silu(gate) · up, with DeepSeek's clamp when limit > 0.
__device__ __forceinline__ float swiglu(float gate, float up, float limit) {
  clamp_swiglu_inputs(gate, up, limit);
  return gate / (1.0f + expf(-gate)) * up;
}

// swiglu with the exponential and the division in the fast hardware forms (ex2.approx, rcp.approx:
// a few ulp, against the e4m3 step of 2^-3 that follows). For the WGMMA kernels' L1 epilogue, whose
// profile showed the IEEE forms' slow-path checks (FCHK and a branch per division; bench/NOTES.md
// v2.12).
__device__ __forceinline__ float swiglu_fast(float gate, float up, float limit) {
  clamp_swiglu_inputs(gate, up, limit);
  return __fdividef(gate, 1.0f + __expf(-gate)) * up;
}

}  // namespace gcmoe::kernels
