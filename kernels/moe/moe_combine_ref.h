#pragma once
// CPU reference of the MoE combine: each token's k (token, expert) slot outputs summed in fp32,
// weighted by the routing weight where the model applies it after the expert (GLM-5.2; DeepSeek
// already applied it before the down projection), plus the shared expert's output (unscaled),
// rounded once to bf16 hidden states (returned as the fp32 values of those bf16 numbers), or left
// in fp32 when `round_to_bf16` is false (to compare with an fp32 reference such as transformers').

#include <cstdint>
#include <span>

#include "engine/common/status.h"

namespace gcmoe::kernels {

struct CombineShape {
  std::int64_t tokens = 0;  // T
  std::int64_t top_k = 0;   // k
  std::int64_t hidden = 0;  // H
};

// slots: [T·k, H] in (token, k) order; weights: [T·k]; shared: [T, H] or empty; out: [T, H].
Status moe_combine_ref(CombineShape shape, std::span<float const> slots,
                       std::span<float const> weights, bool apply_weights,
                       std::span<float const> shared, std::span<float> out,
                       bool round_to_bf16 = true);

}  // namespace gcmoe::kernels
