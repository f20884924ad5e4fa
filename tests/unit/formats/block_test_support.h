#pragma once
// Shared helpers of the block-format tests: seeded Gaussian weights and error measures.

#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace gcmoe::formats::testing {

inline std::vector<float> gaussian(std::size_t const n, float const stddev,
                                   std::uint64_t const seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> dist(0.0f, stddev);
  std::vector<float> out(n);
  for (float& v : out) {
    v = dist(rng);
  }
  return out;
}

// ||a - b|| / ||b||.
inline double relative_l2(std::span<float const> a, std::span<float const> b) {
  double diff = 0.0;
  double norm = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    double const d = static_cast<double>(a[i]) - b[i];
    diff += d * d;
    norm += static_cast<double>(b[i]) * b[i];
  }
  return std::sqrt(diff / norm);
}

inline bool is_power_of_two(float const v) {
  int exponent = 0;
  return std::frexp(v, &exponent) == 0.5f;
}

}  // namespace gcmoe::formats::testing
