#pragma once
// FP8 activation recipes: how a token's hidden vector is quantized before an FP8 GEMM (the MoE
// dispatch quantizes with the model's recipe). Groups are 1×128 along the hidden dimension, one
// scale per (token, group); a ragged last group is allowed.

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "engine/common/status.h"

namespace gcmoe::formats {

enum class ActivationRecipe {
  // No quantization: the fp32 reference path.
  kExactFp32,
  // DeepSeek-V4/V4.1 reference `act_quant` (scale_fmt ue8m0): amax = max(|group|, 1e-4),
  // scale = 2^ceil(log2(amax * (1/448))) (a power of two, storable as e8m0).
  kDeepseekUe8m0,
  // GLM-5.2 (vLLM `per_token_group_quant_fp8`, dynamic): scale = max(|group|, 1e-10) / 448 in f32.
  kGlmDynamic,
};

inline constexpr std::int64_t kActivationGroup = 128;

std::string_view activation_recipe_name(ActivationRecipe recipe);

struct Fp8Activations {
  std::int64_t tokens = 0;
  std::int64_t hidden = 0;
  std::int64_t group = kActivationGroup;
  std::vector<std::uint8_t> codes;  // e4m3 [tokens, hidden]
  std::vector<float> scales;        // [tokens, ceil(hidden / group)]; multiply to dequantize
};

// A group's scale under the recipe for its largest magnitude amax (1 for kExactFp32).
float activation_group_scale(ActivationRecipe recipe, float amax);

// Quantizes x [tokens, hidden] with an FP8 recipe; kExactFp32 has no FP8 form and is
// INVALID_ARGUMENT (use apply_activation_recipe). Inputs must be finite.
StatusOr<Fp8Activations> quantize_activations(ActivationRecipe recipe, std::span<float const> x,
                                              std::int64_t tokens, std::int64_t hidden,
                                              std::int64_t group = kActivationGroup);

// codes × scale per group into `out` [tokens, hidden].
Status dequantize_activations(Fp8Activations const& activations, std::span<float> out);

// What the GEMM sees: x replaced in place by dequantize(quantize(x)); kExactFp32 leaves x as is.
Status apply_activation_recipe(ActivationRecipe recipe, std::span<float> x, std::int64_t tokens,
                               std::int64_t hidden, std::int64_t group = kActivationGroup);

}  // namespace gcmoe::formats
