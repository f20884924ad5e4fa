#include "tests/support/requant_check.h"

#include <algorithm>
#include <cmath>

#include "engine/formats/e4m3.h"

namespace gcmoe::testing {
namespace {

// The e4m3 value next to a code's toward +infinity (up) or -infinity: toward zero the previous
// magnitude (across zero the smallest of the other sign), away from zero the next (±infinity past
// ±448).
double neighbour(std::uint8_t code, bool up) {
  int const mag = code & 0x7f;
  bool const negative = (code & 0x80) != 0;
  if (negative == up) {
    double const smallest = formats::decode_e4m3(0x01);
    return mag == 0 ? (up ? smallest : -smallest) : formats::decode_e4m3(code - 1);
  }
  if (mag >= formats::kE4m3MaxCode) {
    return up ? HUGE_VAL : -HUGE_VAL;
  }
  return formats::decode_e4m3(code + 1);
}

// How far q (a value in units of the group's scale) must move for `code` to be what a quantizer
// writes for it (clamped to ±448, rounded to nearest even): 0 if it is, else the distance to the
// midpoint between the code's value and its neighbour toward q.
double distance_to_code(double q, std::uint8_t code) {
  double const clamped = std::clamp(q, -static_cast<double>(formats::kE4m3Max),
                                    static_cast<double>(formats::kE4m3Max));
  if (code == formats::encode_e4m3(static_cast<float>(clamped))) {
    return 0.0;
  }
  double const got = formats::decode_e4m3(code);
  if (!std::isfinite(got)) {
    return HUGE_VAL;
  }
  return got > clamped ? (got + neighbour(code, false)) / 2.0 - clamped
                       : clamped - (got + neighbour(code, true)) / 2.0;
}

}  // namespace

RequantCheck check_requantization(formats::ActivationRecipe const recipe,
                                  std::span<float const> exact, std::span<std::uint8_t const> codes,
                                  std::span<float const> scales, std::int64_t const group,
                                  double const tolerance) {
  RequantCheck check;
  auto const n = static_cast<std::int64_t>(exact.size());
  check.elements = n;
  for (std::int64_t g = 0; g * group < n; ++g) {
    std::int64_t const begin = g * group;
    std::int64_t const end = std::min(n, begin + group);
    double amax = 0.0;
    for (std::int64_t i = begin; i < end; ++i) {
      amax = std::max(amax, std::fabs(static_cast<double>(exact[static_cast<std::size_t>(i)])));
    }
    float const scale = scales[static_cast<std::size_t>(g)];
    // Every recipe's scale grows with amax: the kernel's must lie between the scales of amax moved
    // down and up by the tolerance (in the units below: amax + amax).
    float const low =
        formats::activation_group_scale(recipe, static_cast<float>(amax * (1.0 - 2.0 * tolerance)));
    float const high =
        formats::activation_group_scale(recipe, static_cast<float>(amax * (1.0 + 2.0 * tolerance)));
    if (!(scale >= low && scale <= high)) {
      ++check.scales_outside;
      if (check.first_outside < 0) {
        check.first_outside = begin;
      }
      continue;
    }
    for (std::int64_t i = begin; i < end; ++i) {
      double const v = exact[static_cast<std::size_t>(i)];
      std::uint8_t const code = codes[static_cast<std::size_t>(i)];
      // In units of the group's amax plus the value's own magnitude: a dot product's error
      // follows the size of its terms, not of its (possibly cancelled) sum.
      double const deviation = distance_to_code(v / scale, code) * scale / (std::fabs(v) + amax);
      check.worst_deviation = std::max(check.worst_deviation, deviation);
      if (deviation > tolerance) {
        ++check.codes_outside;
        if (check.first_outside < 0) {
          check.first_outside = i;
        }
      } else if (deviation > 0.0) {
        ++check.flips;
      }
    }
  }
  return check;
}

}  // namespace gcmoe::testing
