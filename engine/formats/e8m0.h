#pragma once
// E8M0 (OCP MX "e8m0fnu"): an unsigned power of two, value = 2^(byte - 127), byte 255 = NaN; no
// zero, no sign. Block scales are stored this way and must be reinterpreted, never numerically
// cast (model-spec §8.6).

#include <cstdint>

namespace gcmoe::formats {

inline constexpr std::uint8_t kE8m0NanCode = 0xff;
inline constexpr int kE8m0Bias = 127;
inline constexpr int kE8m0MinExponent = -127;  // byte 0
inline constexpr int kE8m0MaxExponent = 127;   // byte 254

// 2^(code - 127) exactly (byte 0 is the fp32 subnormal 2^-127); NaN for 255.
float decode_e8m0(std::uint8_t code);

// Nearest power of two, a mantissa of exactly 1.5 rounding up (as ml_dtypes does for every
// normal fp32). Values below 2^-127 saturate to byte 0; results above 2^127, infinities, zero,
// negatives and NaN have no encoding and give NaN (255).
std::uint8_t encode_e8m0(float value);

// The byte of 2^exponent; exponents outside [-127, 127] have none and give NaN.
std::uint8_t e8m0_from_exponent(int exponent);

// ceil(log2(value)) of a positive normal fp32, from its bits: the exponent of the smallest power
// of two >= value. This is DeepSeek's `fast_log2_ceil`, used to choose ue8m0 scales so that
// amax / scale never exceeds the element format's maximum.
int log2_ceil(float value);

}  // namespace gcmoe::formats
