#pragma once
// FP8 e4m3 (OCP "e4m3fn"): 1 sign, 4 exponent (bias 7), 3 mantissa bits. No infinities; 0x7f and
// 0xff are NaN; the largest finite magnitude is 448 (0x7e); subnormals are multiples of 2^-9.

#include <cstdint>

namespace gcmoe::formats {

inline constexpr float kE4m3Max = 448.0f;
inline constexpr std::uint8_t kE4m3MaxCode = 0x7e;
inline constexpr std::uint8_t kE4m3NanCode = 0x7f;

// The exact value of a code (NaN for 0x7f/0xff).
float decode_e4m3(std::uint8_t code);

// Round-to-nearest-even, saturating: finite or infinite inputs beyond the range become ±448
// (torch's `.to(float8_e4m3fn)` and ml_dtypes give NaN there; every release recipe clamps to
// ±448 before the cast, so saturation is what a quantizer wants). NaN keeps its sign: 0x7f/0xff.
std::uint8_t encode_e4m3(float value);

}  // namespace gcmoe::formats
