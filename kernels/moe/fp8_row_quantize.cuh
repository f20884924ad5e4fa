#pragma once
// One block quantizes one activation row to FP8 with the model's recipe: the dispatch of the
// single-rank layer (moe_local_dispatch.cu) and of expert parallelism (ep_dispatch.cu) share it.
// Block shape: kRowQuantWarps warps; warp w handles the 128-value groups w, w + 16, … (4 values
// per lane), all its loads issued before the first reduction, so a decode row costs about one
// load latency. CPU twin: formats::quantize_activations.

#include <cstdint>

#include "kernels/moe/fp8_activation_math.cuh"

namespace gcmoe::kernels {

inline constexpr int kRowQuantWarps = 16;
inline constexpr int kRowQuantMaxGroups = 4;  // per warp: hidden ≤ 16 · 4 · 128 = 8192

// x_row null: a zero row (scale 0). xq_row [hidden] e4m3, scales [hidden / 128].
__device__ __forceinline__ void quantize_row_fp8(float const* x_row, int hidden,
                                                 RequantScale recipe, std::uint8_t* xq_row,
                                                 float* scales) {
  constexpr int kGroup = 128;
  int const warp = static_cast<int>(threadIdx.x) / 32;
  int const lane = static_cast<int>(threadIdx.x) % 32;
  int const groups = hidden / kGroup;
  float4 v[kRowQuantMaxGroups];
#pragma unroll
  for (int i = 0; i < kRowQuantMaxGroups; ++i) {
    int const g = warp + i * kRowQuantWarps;
    v[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (x_row != nullptr && g < groups) {
      v[i] = reinterpret_cast<float4 const*>(x_row + g * kGroup)[lane];
    }
  }
#pragma unroll
  for (int i = 0; i < kRowQuantMaxGroups; ++i) {
    int const g = warp + i * kRowQuantWarps;
    if (g >= groups) {
      break;
    }
    float m = fmaxf(fmaxf(fabsf(v[i].x), fabsf(v[i].y)), fmaxf(fabsf(v[i].z), fabsf(v[i].w)));
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
      m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
    }
    float scale = 0.0f;
    std::uint32_t packed = 0;
    if (x_row != nullptr) {
      scale = fp8_group_scale(recipe, m);
      float const values[4] = {v[i].x, v[i].y, v[i].z, v[i].w};
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        packed |= static_cast<std::uint32_t>(fp8_encode(values[j], scale)) << (8 * j);
      }
    }
    reinterpret_cast<std::uint32_t*>(xq_row + g * kGroup)[lane] = packed;
    if (lane == 0) {
      scales[g] = scale;
    }
  }
}

}  // namespace gcmoe::kernels
