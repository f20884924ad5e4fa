#pragma once
// ||out - ref|| / ||ref|| in double, the error measure every GPU-vs-CPU test prints.

#include <cmath>
#include <span>

namespace gcmoe::testing {

inline double relative_l2_error(std::span<float const> out, std::span<float const> ref) {
  double diff = 0.0;
  double norm = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    double const d = static_cast<double>(out[i]) - static_cast<double>(ref[i]);
    if (std::isnan(out[i])) {
      return INFINITY;
    }
    diff += d * d;
    norm += static_cast<double>(ref[i]) * static_cast<double>(ref[i]);
  }
  return norm > 0.0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

}  // namespace gcmoe::testing
