#pragma once
// Random test data: never all zeros, seeded so a failure can be replayed (the seed is printed).

#include <cstdint>
#include <random>
#include <vector>

namespace gcmoe::testing {

inline std::vector<float> random_floats(std::size_t n, std::uint64_t seed, float lo = -1.0f,
                                        float hi = 1.0f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> out(n);
  for (auto& v : out) {
    v = dist(rng);
  }
  return out;
}

}  // namespace gcmoe::testing
