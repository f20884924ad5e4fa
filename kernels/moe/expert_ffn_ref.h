#pragma once
// CPU reference of one routed (or shared) expert's FFN on a decode batch, the semantics the
// GC-MoE grouped GEMM must reproduce (model-spec §2):
//   g = x·Wgateᵀ, u = x·Wupᵀ                         (fp32 accumulation)
//   DeepSeek: u = clamp(u, ±limit), g = min(g, limit)  (swiglu_limit; 0 = no clamp, GLM-5.2)
//   h = silu(g) · u
//   DeepSeek routed experts: h *= routing weight      (before the down projection)
//   y = h·Wdownᵀ                                      (the (token, expert) slot output)
// GLM-5.2 applies its routing weight in the combine instead (moe_combine_ref.h).
// Activations entering each GEMM are fake-quantized (quantize, then dequantize) with the release's
// recipe so the reference sees exactly the values an FP8 kernel multiplies. Weights come already
// dequantized to fp32 (engine/formats), so format decoding is tested separately.

#include <cstdint>
#include <span>

#include "engine/common/status.h"
#include "engine/formats/activation_quant.h"

namespace gcmoe::kernels {

struct ExpertFfnOptions {
  float swiglu_limit = 0.0f;  // DeepSeek 10.0; 0 disables the clamp
  bool weight_before_down = false;
  // Applied to x before L1 and to h before L2 (engine/formats/activation_quant.h).
  formats::ActivationRecipe activation_recipe = formats::ActivationRecipe::kExactFp32;
};

// Dequantized weights of one expert, row-major [out, in].
struct DenseExpertWeights {
  std::int64_t hidden = 0;        // H
  std::int64_t intermediate = 0;  // I
  std::span<float const> gate;    // [I, H]
  std::span<float const> up;      // [I, H]
  std::span<float const> down;    // [H, I]
};

// The two halves of expert_ffn_ref, for tests that check a kernel's requantized h on its own:
// h before its requantization ([T, I]: the SwiGLU output, times the routing weight where
// weight_before_down), and y = h·Wdownᵀ from an h as the down GEMM reads it (out [T, H]).
Status expert_ffn_hidden_ref(DenseExpertWeights const& weights, ExpertFfnOptions const& options,
                             std::span<float const> x, std::span<float const> route_weight,
                             std::span<float> hidden);
Status expert_ffn_down_ref(DenseExpertWeights const& weights, std::span<float const> hidden,
                           std::span<float> out);

// x: [T, H]; route_weight: [T] (read only when weight_before_down); out: [T, H].
Status expert_ffn_ref(DenseExpertWeights const& weights, ExpertFfnOptions const& options,
                      std::span<float const> x, std::span<float const> route_weight,
                      std::span<float> out);

}  // namespace gcmoe::kernels
