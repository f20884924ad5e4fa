#pragma once
// SwiGLU MLP in fp32: out = down(silu(gate x) · up x), no clamp (GLM-5.2). The dense layers
// (< first_k_dense_replace) and the shared expert use it.

#include <span>

#include "engine/model/glm/glm_weights.h"

namespace gcmoe::model::glm {

// x: [T, hidden]; out: [T, hidden] (overwritten).
void swiglu_mlp(SwigluWeights const& weights, std::span<float const> x, std::span<float> out);

}  // namespace gcmoe::model::glm
