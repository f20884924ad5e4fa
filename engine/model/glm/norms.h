#pragma once
// The two normalizations of GLM-5.2, in fp32 as transformers computes them:
//   RMSNorm   y = x · rsqrt(mean(x²) + eps) · weight            (layer, q/kv latent, final norms)
//   LayerNorm y = (x − mean) · rsqrt(var + eps) · weight + bias  (indexer k_norm; biased var)
// Applied row by row, in place.

#include <cstdint>
#include <span>

namespace gcmoe::model::glm {

// x: [rows, weight.size()].
void rms_norm(std::span<float> x, std::span<float const> weight, float eps);

// x: [rows, weight.size()]; bias the same width as weight.
void layer_norm(std::span<float> x, std::span<float const> weight, std::span<float const> bias,
                float eps);

}  // namespace gcmoe::model::glm
