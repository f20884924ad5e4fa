#include "engine/formats/e2m1.h"

#include <bit>
#include <cmath>

namespace gcmoe::formats {
namespace {

constexpr float kMagnitudes[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

}  // namespace

float decode_e2m1(std::uint8_t const code) {
  float const magnitude = kMagnitudes[code & 0x7];
  return (code & 0x8) != 0 ? -magnitude : magnitude;
}

std::uint8_t encode_e2m1(float const value) {
  if (std::isnan(value)) {
    return 0;
  }
  bool const negative = (std::bit_cast<std::uint32_t>(value) >> 31) != 0;
  float const magnitude = std::fabs(value);
  // The grid is 0.5-spaced up to 2 (codes 0..4 = 2x), 1-spaced up to 4 (codes 4..6) and then
  // {4, 6}. nearbyint rounds half to even, and on these sub-grids the even integers are exactly
  // the even codes; 5 is the tie between 4 (code 6) and 6 (code 7). Both scalings are exact.
  std::uint8_t code = 0;
  if (magnitude <= 2.0f) {
    code = static_cast<std::uint8_t>(std::nearbyint(magnitude * 2.0f));
  } else if (magnitude <= 4.0f) {
    code = static_cast<std::uint8_t>(4.0f + std::nearbyint(magnitude - 2.0f));
  } else {
    code = magnitude > 5.0f ? 7 : 6;
  }
  return negative ? static_cast<std::uint8_t>(code | 0x8) : code;
}

}  // namespace gcmoe::formats
