#pragma once
// FP4 e2m1 (OCP MX): 1 sign (bit 3), 2 exponent, 1 mantissa bit. Codes 0..7 are
// {0, 0.5, 1, 1.5, 2, 3, 4, 6}; 8..15 the same negated. No infinities, no NaN.

#include <cstdint>

namespace gcmoe::formats {

inline constexpr float kE2m1Max = 6.0f;

// The value of the low 4 bits of `code`.
float decode_e2m1(std::uint8_t code);

// Round-to-nearest-even on the code (a tie goes to the even code), saturating to ±6, sign kept
// (a negative value rounding to 0 gives 0x8, negative zero). NaN has no encoding and gives +0.
std::uint8_t encode_e2m1(float value);

// Byte j of a packed row holds elements 2j (low nibble) and 2j+1 (high nibble) along K
// (model-spec §3.1: "byte 0x21 = 0.5 then 1.0 in source order").
inline std::uint8_t pack_e2m1_pair(std::uint8_t even_element, std::uint8_t odd_element) {
  return static_cast<std::uint8_t>((even_element & 0xf) | ((odd_element & 0xf) << 4));
}

}  // namespace gcmoe::formats
