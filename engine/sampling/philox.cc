#include "engine/sampling/philox.h"

namespace gcmoe::sampling {
namespace {

// Multipliers and Weyl key increments of Philox4x32 (Random123 philox.h).
constexpr std::uint32_t kMultiplier0 = 0xD2511F53u;
constexpr std::uint32_t kMultiplier1 = 0xCD9E8D57u;
constexpr std::uint32_t kWeyl0 = 0x9E3779B9u;
constexpr std::uint32_t kWeyl1 = 0xBB67AE85u;
constexpr int kRounds = 10;

struct HiLo {
  std::uint32_t hi;
  std::uint32_t lo;
};

HiLo mul_hi_lo(std::uint32_t a, std::uint32_t b) {
  std::uint64_t const product = static_cast<std::uint64_t>(a) * b;
  return {static_cast<std::uint32_t>(product >> 32), static_cast<std::uint32_t>(product)};
}

PhiloxCounter round_once(PhiloxCounter const& c, PhiloxKey const& k) {
  HiLo const p0 = mul_hi_lo(kMultiplier0, c[0]);
  HiLo const p1 = mul_hi_lo(kMultiplier1, c[2]);
  return {p1.hi ^ c[1] ^ k[0], p1.lo, p0.hi ^ c[3] ^ k[1], p0.lo};
}

}  // namespace

PhiloxCounter philox4x32_10(PhiloxCounter counter, PhiloxKey key) {
  for (int round = 0; round < kRounds; ++round) {
    if (round > 0) {
      key[0] += kWeyl0;
      key[1] += kWeyl1;
    }
    counter = round_once(counter, key);
  }
  return counter;
}

double philox_uniform(std::uint64_t seed, std::uint64_t step, std::uint32_t stream) {
  PhiloxCounter const counter = {static_cast<std::uint32_t>(step),
                                 static_cast<std::uint32_t>(step >> 32), stream, 0};
  PhiloxKey const key = {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)};
  PhiloxCounter const bits = philox4x32_10(counter, key);
  // 27 high bits of word 0 and 26 of word 1 → a 53-bit mantissa, scaled by 2^-53.
  std::uint64_t const mantissa =
      (static_cast<std::uint64_t>(bits[0] >> 5) << 26) | static_cast<std::uint64_t>(bits[1] >> 6);
  return static_cast<double>(mantissa) * 0x1.0p-53;
}

}  // namespace gcmoe::sampling
