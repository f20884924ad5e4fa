#include "engine/formats/e8m0.h"

#include <bit>
#include <cmath>
#include <limits>

namespace gcmoe::formats {

float decode_e8m0(std::uint8_t const code) {
  if (code == kE8m0NanCode) {
    return std::numeric_limits<float>::quiet_NaN();
  }
  return std::ldexp(1.0f, static_cast<int>(code) - kE8m0Bias);
}

std::uint8_t encode_e8m0(float const value) {
  if (!(value > 0.0f) || std::isinf(value)) {  // NaN, zero, negatives, +inf
    return kE8m0NanCode;
  }
  std::uint32_t const bits = std::bit_cast<std::uint32_t>(value);
  std::uint32_t const field = bits >> 23;  // sign is 0 here
  std::uint32_t const mantissa = bits & 0x7fffffu;
  if (field == 0) {
    // fp32 subnormal m * 2^-149: 2^-127 is m = 2^22, the half-way point up to 2^-126 is
    // m = 1.5 * 2^22; anything smaller saturates to the smallest scale, 2^-127.
    return mantissa >= 0x600000u ? std::uint8_t{1} : std::uint8_t{0};
  }
  std::uint32_t const rounded = field + (mantissa >= 0x400000u ? 1u : 0u);
  return rounded > 254u ? kE8m0NanCode : static_cast<std::uint8_t>(rounded);
}

std::uint8_t e8m0_from_exponent(int const exponent) {
  if (exponent < kE8m0MinExponent || exponent > kE8m0MaxExponent) {
    return kE8m0NanCode;
  }
  return static_cast<std::uint8_t>(exponent + kE8m0Bias);
}

int log2_ceil(float const value) {
  std::uint32_t const bits = std::bit_cast<std::uint32_t>(value);
  int const exponent = static_cast<int>((bits >> 23) & 0xffu) - 127;
  return exponent + ((bits & 0x7fffffu) != 0 ? 1 : 0);
}

}  // namespace gcmoe::formats
