#pragma once
// Checks a kernel's FP8 requantization of one row (e4m3 codes and a scale per group; or of many
// rows laid end to end, when a row is whole groups) against the exact values it quantized,
// allowing what FP8 tensor-core GEMMs legitimately do: their accumulation carries an error of
// about 2^-14 of the size of its terms (so the f32 values a kernel quantizes are not the
// reference's, and a sum that cancels is off by more than its own size times that), so a value
// near an e4m3 rounding midpoint may round to either neighbour (or, near zero, to a few
// subnormal steps away), and a group whose amax sits at a power-of-two boundary may take either
// scale. A flip moves one element by one e4m3 step (6-12%); when it hits a row's largest element
// the end-to-end error of a test row reaches a few percent although the kernel is right.
// Checking the requantization element by element (every code the rounding of its exact value
// moved by at most tolerance × (|value| + the group's amax)) and the next GEMM against the
// kernel's own FP8 input keeps the tests tight without that flake (bench/NOTES.md, MXFP4 v5.8).

#include <cstdint>
#include <span>

#include "engine/formats/activation_quant.h"

namespace gcmoe::testing {

struct RequantCheck {
  std::int64_t elements = 0;
  // Codes that are no rounding of an exact value moved by tolerance × (|value| + amax): errors.
  std::int64_t codes_outside = 0;
  // Group scales outside the recipe's scales of amax moved by tolerance × 2 amax: errors.
  std::int64_t scales_outside = 0;
  // Codes that differ from the rounding of the exact value but are within the tolerance.
  std::int64_t flips = 0;
  std::int64_t first_outside = -1;  // element index, -1 if none
  // The largest move (in units of |value| + amax) any code needed: what the tolerance must cover.
  double worst_deviation = 0.0;
  bool ok() const { return codes_outside == 0 && scales_outside == 0; }
};

// exact: the row's values before quantization; codes: its e4m3 codes; scales: one per `group`
// values (multiply to dequantize); tolerance: relative to |value| + amax (the GPU tests' choice:
// tests/gpu/kernels/moe/mxfp4_expert_ffn_case.h). Sizes must agree (codes.size() == exact.size(),
// scales.size() == groups).
RequantCheck check_requantization(formats::ActivationRecipe recipe, std::span<float const> exact,
                                  std::span<std::uint8_t const> codes,
                                  std::span<float const> scales, std::int64_t group,
                                  double tolerance);

}  // namespace gcmoe::testing
