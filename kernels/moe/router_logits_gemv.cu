#include <cstddef>
#include <cstdint>

#include "kernels/hopper/pdl_launch.h"
#include "kernels/hopper/ptx.cuh"
#include "kernels/moe/router_logits_gemv.h"

namespace gcmoe::kernels {
namespace {

constexpr unsigned kFullMask = 0xffffffffu;

// Experts per block and warps per block (router_logits_gemv.h).
constexpr int kGemvExperts = 2;
constexpr int kGemvWarps = 8;

template <int kTokens>
__global__ void __launch_bounds__(kGemvWarps * 32)
    router_gemv_kernel(float const* __restrict__ x, float const* __restrict__ w, int hidden,
                       int experts, float* __restrict__ logits, bool chained) {
  hopper::enter_launch_chain(chained);
  __shared__ float sums[kGemvWarps][kTokens][kGemvExperts];
  int const warp = static_cast<int>(threadIdx.x) / 32;
  int const lane = static_cast<int>(threadIdx.x) % 32;
  int const e0 = static_cast<int>(blockIdx.x) * kGemvExperts;
  int const quads = hidden / 4;
  int const per_warp = (quads + kGemvWarps - 1) / kGemvWarps;
  int const q_begin = warp * per_warp;
  int const q_end = min(quads, q_begin + per_warp);
  float acc[kTokens][kGemvExperts] = {};
  for (int q = q_begin + lane; q < q_end; q += 32) {
    float4 wv[kGemvExperts];
#pragma unroll
    for (int e = 0; e < kGemvExperts; ++e) {
      int const expert = min(e0 + e, experts - 1);
      wv[e] =
          __ldg(reinterpret_cast<float4 const*>(w + static_cast<std::size_t>(expert) * hidden) + q);
    }
#pragma unroll
    for (int t = 0; t < kTokens; ++t) {
      float4 const xv =
          __ldg(reinterpret_cast<float4 const*>(x + static_cast<std::size_t>(t) * hidden) + q);
#pragma unroll
      for (int e = 0; e < kGemvExperts; ++e) {
        acc[t][e] = fmaf(xv.x, wv[e].x, acc[t][e]);
        acc[t][e] = fmaf(xv.y, wv[e].y, acc[t][e]);
        acc[t][e] = fmaf(xv.z, wv[e].z, acc[t][e]);
        acc[t][e] = fmaf(xv.w, wv[e].w, acc[t][e]);
      }
    }
  }
#pragma unroll
  for (int t = 0; t < kTokens; ++t) {
#pragma unroll
    for (int e = 0; e < kGemvExperts; ++e) {
      float v = acc[t][e];
#pragma unroll
      for (int offset = 16; offset > 0; offset /= 2) {
        v += __shfl_xor_sync(kFullMask, v, offset);
      }
      if (lane == 0) {
        sums[warp][t][e] = v;
      }
    }
  }
  __syncthreads();
  int const i = static_cast<int>(threadIdx.x);
  if (i < kTokens * kGemvExperts) {
    int const t = i / kGemvExperts;
    int const e = i % kGemvExperts;
    if (e0 + e < experts) {
      float total = 0.0f;
#pragma unroll
      for (int k = 0; k < kGemvWarps; ++k) {
        total += sums[k][t][e];
      }
      logits[static_cast<std::size_t>(t) * experts + e0 + e] = total;
    }
  }
}

template <int kTokens>
cudaError_t launch_gemv(float const* x, float const* w, int hidden, int experts, float* logits,
                        cudaStream_t stream, bool chained) {
  unsigned const blocks = static_cast<unsigned>((experts + kGemvExperts - 1) / kGemvExperts);
  return hopper::launch_with_pdl(router_gemv_kernel<kTokens>, dim3(blocks), dim3(kGemvWarps * 32),
                                 0, stream, chained, x, w, hidden, experts, logits, chained);
}

}  // namespace

bool router_gemv_supported(float const* x, float const* w, int tokens, int hidden) {
  return tokens <= kRouterGemvMaxTokens && hidden % 4 == 0 &&
         reinterpret_cast<std::uintptr_t>(x) % 16 == 0 &&
         reinterpret_cast<std::uintptr_t>(w) % 16 == 0;
}

cudaError_t launch_router_logits_gemv(float const* x, float const* w, int tokens, int hidden,
                                      int experts, float* logits, cudaStream_t stream,
                                      bool chained) {
  if (tokens <= 1) {
    return launch_gemv<1>(x, w, hidden, experts, logits, stream, chained);
  } else if (tokens <= 2) {
    return launch_gemv<2>(x, w, hidden, experts, logits, stream, chained);
  } else if (tokens <= 4) {
    return launch_gemv<4>(x, w, hidden, experts, logits, stream, chained);
  } else if (tokens <= 8) {
    return launch_gemv<8>(x, w, hidden, experts, logits, stream, chained);
  }
  return launch_gemv<16>(x, w, hidden, experts, logits, stream, chained);
}

}  // namespace gcmoe::kernels
