#include "engine/formats/bf16.h"

#include <bit>
#include <cmath>

namespace gcmoe::formats {

float decode_bf16(std::uint16_t const bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

std::uint16_t encode_bf16(float const value) {
  std::uint32_t const bits = std::bit_cast<std::uint32_t>(value);
  if (std::isnan(value)) {
    return static_cast<std::uint16_t>((bits >> 16) | 0x0040u);  // force the quiet bit
  }
  std::uint32_t const rounded = bits + 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(rounded >> 16);
}

}  // namespace gcmoe::formats
