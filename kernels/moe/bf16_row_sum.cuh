#pragma once
// The combine's inner steps, shared by the single-rank combine (moe_local_dispatch.cu) and the
// expert-parallel one (ep_dispatch.cu): 8 consecutive bf16 values (one 16-byte load) added, times
// a weight, into fp32 accumulators, then one rounding to bf16 at the end (moe_combine_ref's order);
// and the combine's reset of the L2-by-rows counters.

#include <cuda_bf16.h>

#include <cstdint>

namespace gcmoe::kernels {

// acc[i] += weight · row[i], i < 8; row 16-byte aligned. L2-only load (`__ldcg`): rows may come
// from another rank or partition, written after this SM last cached them.
__device__ __forceinline__ void add_bf16x8(float (&acc)[8], std::uint16_t const* row,
                                           float weight) {
  uint4 const v = __ldcg(reinterpret_cast<uint4 const*>(row));
  std::uint32_t const words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    acc[2 * i] += weight * __uint_as_float(words[i] << 16);
    acc[2 * i + 1] += weight * __uint_as_float(words[i] & 0xffff0000u);
  }
}

// out[i] = bf16(acc[i]) as fp32, i < 8.
__device__ __forceinline__ void store_bf16_rounded8(float const (&acc)[8], float* out) {
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    out[i] = __bfloat162float(__float2bfloat16_rn(acc[i]));
  }
}

// One thread's share of a combine: out[t, h0 .. h0 + 8) = bf16(Σ_j w_j · row_of(t·k + j)[h0 ..]
// + shared_y[t, h0 ..]) in slot order, the shared expert last. weights null: every w_j = 1 (the
// model weighted before L2); shared_y null: no shared expert. row_of(pair) is the expert output
// row of that pair, wherever it lives (this rank's buffer or its owner's).
template <typename RowOf>
__device__ __forceinline__ void combine_token_slice(RowOf const& row_of, float const* weights,
                                                    std::uint16_t const* shared_y, int t, int h0,
                                                    int hidden, int top_k, float* out) {
  float acc[8] = {};
  for (int j = 0; j < top_k; ++j) {
    int const pair = t * top_k + j;
    add_bf16x8(acc, row_of(pair) + h0, weights != nullptr ? weights[pair] : 1.0f);
  }
  if (shared_y != nullptr) {
    add_bf16x8(acc, shared_y + static_cast<std::int64_t>(t) * hidden + h0, 1.0f);
  }
  store_bf16_rounded8(acc, out + static_cast<std::int64_t>(t) * hidden + h0);
}

// Block (t, ·)'s share of zeroing counters[0, count) (the L2-by-rows counters the combine resets
// for the next run): indices t, t + T, … spread over the block's threads. Call after every reader
// of the counters has finished.
__device__ __forceinline__ void zero_token_share(int* counters, int count, int t, int num_tokens) {
  int const stride = num_tokens * static_cast<int>(blockDim.x);
  for (int i = t + static_cast<int>(threadIdx.x) * num_tokens; i < count; i += stride) {
    counters[i] = 0;
  }
}

}  // namespace gcmoe::kernels
