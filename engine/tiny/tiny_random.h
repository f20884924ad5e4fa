#pragma once
// Deterministic random numbers for tiny checkpoints. Each tensor draws from its own stream keyed
// by (seed, tensor name), so values do not depend on the order tensors are written, and the same
// seed gives byte-identical files. std::normal_distribution is implementation-defined and is not
// used: the normals here are Box–Muller over xoshiro256**.

#include <array>
#include <cstdint>
#include <string_view>

namespace gcmoe::tiny {

class TinyRandom {
 public:
  TinyRandom(std::uint64_t seed, std::string_view stream);

  std::uint64_t next_u64();
  // Uniform in [0, 1) with 53 random bits.
  double uniform();
  // Uniform integer in [0, n); n > 0.
  std::int64_t below(std::int64_t n);
  double normal(double mean, double stddev);

 private:
  std::array<std::uint64_t, 4> state_{};
  double spare_normal_ = 0.0;
  bool has_spare_ = false;
};

}  // namespace gcmoe::tiny
