#include "engine/formats/e4m3.h"

#include <bit>
#include <cmath>
#include <limits>

namespace gcmoe::formats {
namespace {

constexpr float kSubnormalStep = 0x1p-9f;  // value of mantissa code 1 with exponent field 0
constexpr float kMinNormal = 0x1p-6f;

}  // namespace

float decode_e4m3(std::uint8_t const code) {
  float const sign = (code & 0x80) != 0 ? -1.0f : 1.0f;
  int const exponent = (code >> 3) & 0xf;
  int const mantissa = code & 0x7;
  if ((code & 0x7f) == kE4m3NanCode) {
    return std::copysign(std::numeric_limits<float>::quiet_NaN(), sign);
  }
  if (exponent == 0) {
    return sign * static_cast<float>(mantissa) * kSubnormalStep;
  }
  return sign * std::ldexp(1.0f + static_cast<float>(mantissa) / 8.0f, exponent - 7);
}

std::uint8_t encode_e4m3(float const value) {
  std::uint32_t const bits = std::bit_cast<std::uint32_t>(value);
  auto const sign = static_cast<std::uint8_t>((bits >> 24) & 0x80);
  if (std::isnan(value)) {
    return sign | kE4m3NanCode;
  }
  float const magnitude = std::fabs(value);
  if (magnitude >= kE4m3Max) {
    return sign | kE4m3MaxCode;
  }
  if (magnitude < kMinNormal) {
    // Multiples of 2^-9; the scaling is exact and nearbyint rounds half to even. A result of 8
    // is 2^-6, whose code 0x08 is the smallest normal: the encoding is continuous there.
    auto const steps = static_cast<std::uint8_t>(std::nearbyint(magnitude / kSubnormalStep));
    return sign | steps;
  }
  // Normal: round the 23-bit fp32 mantissa to 3 bits, half to even; a carry out of the mantissa
  // bumps the exponent, which is the correct result. magnitude < 448 keeps it below 0x7f.
  std::uint32_t const abs_bits = bits & 0x7fffffffu;
  std::uint32_t const rounded = abs_bits + 0x7ffffu + ((abs_bits >> 20) & 1u);
  int const exponent = static_cast<int>(rounded >> 23) - 127 + 7;
  auto const mantissa = static_cast<std::uint8_t>((rounded >> 20) & 0x7u);
  return sign | static_cast<std::uint8_t>(exponent << 3) | mantissa;
}

}  // namespace gcmoe::formats
