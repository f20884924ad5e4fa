#pragma once
// The router's gate GEMM on the tensor cores for batches past the GEMV's (T > 16): split-K partial
// logits, partial[split][t][e] = sum over h in the split's range of x[t][h] * w[e][h], in the same
// workspace layout as the CUDA-core kernel (routing.cu), so the top-k kernel adds the splits the
// same way.
//
// Precision: fp32 inputs as three TF32 products per term (3xTF32: x = x_hi + x_lo, w = w_hi +
// w_lo with each part TF32-rounded; x_lo·w_hi + x_hi·w_lo + x_hi·w_hi, accumulated in fp32). Each
// term carries a relative error of about 2^-21 (the dropped x_lo·w_lo and the parts' rounding),
// against 2^-24 for an fp32 FMA: near-ties in the selection may fall the other way, as between any
// two fp32 summation orders (router_ref.h). The order is fixed: results are deterministic.

#include <cuda_runtime.h>

#include <cstdint>

namespace gcmoe::kernels {

// Blocks cover 64 tokens x 64 experts; splits are multiples of this many hidden elements.
inline constexpr int kRouterMmaTileT = 64;
inline constexpr int kRouterMmaTileE = 64;
inline constexpr int kRouterMmaTileK = 32;

// Rows are read as 16-byte vectors: H a multiple of 4 and both matrices 16-byte aligned.
bool router_mma_supported(float const* x, float const* w, int hidden);

// grid: (ceil(E / 64), ceil(T / 64), splits); k_per_split a multiple of kRouterMmaTileK.
// chained: hopper::enter_launch_chain.
cudaError_t launch_router_logits_mma(float const* x, float const* w, int tokens, int hidden,
                                     int experts, int k_per_split, int splits, float* partial,
                                     cudaStream_t stream, bool chained);

}  // namespace gcmoe::kernels
