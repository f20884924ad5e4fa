#include "engine/formats/activation_quant.h"

#include <algorithm>
#include <cmath>

#include "engine/common/check.h"
#include "engine/formats/e4m3.h"
#include "engine/formats/e8m0.h"
#include "engine/formats/matrix_dims.h"

namespace gcmoe::formats {
namespace {

constexpr float kDeepseekMinAmax = 1e-4f;
constexpr float kGlmMinAmax = 1e-10f;

Status check_activation_dims(std::size_t const values, std::int64_t const tokens,
                             std::int64_t const hidden, std::int64_t const group) {
  GCMOE_RETURN_IF_ERROR(check_block_dims({tokens, hidden}, {1, group}));
  GCMOE_CHECK_ARG(values == static_cast<std::size_t>(tokens * hidden),
                  "{} activation values for [{}, {}] (want {})", values, tokens, hidden,
                  tokens * hidden);
  return Status();
}

}  // namespace

float activation_group_scale(ActivationRecipe const recipe, float const amax) {
  switch (recipe) {
    case ActivationRecipe::kExactFp32:
      return 1.0f;
    case ActivationRecipe::kDeepseekUe8m0:
      return std::ldexp(1.0f, log2_ceil(std::max(amax, kDeepseekMinAmax) * (1.0f / kE4m3Max)));
    case ActivationRecipe::kGlmDynamic:
      return std::max(amax, kGlmMinAmax) / kE4m3Max;
  }
  return 1.0f;
}

std::string_view activation_recipe_name(ActivationRecipe const recipe) {
  switch (recipe) {
    case ActivationRecipe::kExactFp32:
      return "exact_fp32";
    case ActivationRecipe::kDeepseekUe8m0:
      return "deepseek_fp8_ue8m0_1x128";
    case ActivationRecipe::kGlmDynamic:
      return "glm_fp8_dynamic_1x128";
  }
  return "unknown";
}

StatusOr<Fp8Activations> quantize_activations(ActivationRecipe const recipe,
                                              std::span<float const> x, std::int64_t const tokens,
                                              std::int64_t const hidden, std::int64_t const group) {
  GCMOE_CHECK_ARG(recipe != ActivationRecipe::kExactFp32,
                  "recipe {} has no FP8 form; apply_activation_recipe leaves values exact",
                  activation_recipe_name(recipe));
  GCMOE_RETURN_IF_ERROR(check_activation_dims(x.size(), tokens, hidden, group));
  GCMOE_RETURN_IF_ERROR(check_finite(x));
  std::int64_t const groups = (hidden + group - 1) / group;
  Fp8Activations result{tokens, hidden, group, std::vector<std::uint8_t>(x.size()),
                        std::vector<float>(static_cast<std::size_t>(tokens * groups))};
  for (std::int64_t t = 0; t < tokens; ++t) {
    for (std::int64_t g = 0; g < groups; ++g) {
      std::int64_t const begin = t * hidden + g * group;
      std::int64_t const end = t * hidden + std::min(hidden, (g + 1) * group);
      float amax = 0.0f;
      for (std::int64_t i = begin; i < end; ++i) {
        amax = std::max(amax, std::fabs(x[static_cast<std::size_t>(i)]));
      }
      float const scale = activation_group_scale(recipe, amax);
      result.scales[static_cast<std::size_t>(t * groups + g)] = scale;
      for (std::int64_t i = begin; i < end; ++i) {
        auto const k = static_cast<std::size_t>(i);
        result.codes[k] = encode_e4m3(std::clamp(x[k] / scale, -kE4m3Max, kE4m3Max));
      }
    }
  }
  return result;
}

Status dequantize_activations(Fp8Activations const& activations, std::span<float> out) {
  std::int64_t const tokens = activations.tokens;
  std::int64_t const hidden = activations.hidden;
  std::int64_t const group = activations.group;
  GCMOE_RETURN_IF_ERROR(check_activation_dims(out.size(), tokens, hidden, group));
  std::int64_t const groups = (hidden + group - 1) / group;
  GCMOE_CHECK_ARG(activations.codes.size() == out.size() &&
                      activations.scales.size() == static_cast<std::size_t>(tokens * groups),
                  "{} codes / {} scales do not match [{}, {}] in groups of {}",
                  activations.codes.size(), activations.scales.size(), tokens, hidden, group);
  for (std::int64_t t = 0; t < tokens; ++t) {
    for (std::int64_t h = 0; h < hidden; ++h) {
      auto const i = static_cast<std::size_t>(t * hidden + h);
      out[i] = decode_e4m3(activations.codes[i]) *
               activations.scales[static_cast<std::size_t>(t * groups + h / group)];
    }
  }
  return Status();
}

Status apply_activation_recipe(ActivationRecipe const recipe, std::span<float> x,
                               std::int64_t const tokens, std::int64_t const hidden,
                               std::int64_t const group) {
  GCMOE_RETURN_IF_ERROR(check_activation_dims(x.size(), tokens, hidden, group));
  switch (recipe) {
    case ActivationRecipe::kExactFp32:
      return Status();
    case ActivationRecipe::kDeepseekUe8m0:
    case ActivationRecipe::kGlmDynamic:
      break;
  }
  GCMOE_ASSIGN_OR_RETURN(Fp8Activations const quantized,
                         quantize_activations(recipe, x, tokens, hidden, group));
  return dequantize_activations(quantized, x);
}

}  // namespace gcmoe::formats
