#include "engine/tiny/tiny_random.h"

#include <cmath>
#include <numbers>

namespace gcmoe::tiny {
namespace {

std::uint64_t splitmix64(std::uint64_t& x) {
  x += 0x9e3779b97f4a7c15ull;
  std::uint64_t z = x;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::uint64_t rotl(std::uint64_t const x, int const k) {
  return (x << k) | (x >> (64 - k));
}

// FNV-1a: a stable hash of the stream name.
std::uint64_t fnv1a(std::string_view const text) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (char const c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

}  // namespace

TinyRandom::TinyRandom(std::uint64_t const seed, std::string_view const stream) {
  std::uint64_t x = seed ^ fnv1a(stream);
  for (std::uint64_t& word : state_) {
    word = splitmix64(x);
  }
}

std::uint64_t TinyRandom::next_u64() {
  std::uint64_t* const s = state_.data();  // raw access: this is the hot loop of make-tiny
  std::uint64_t const result = rotl(s[1] * 5, 7) * 9;
  std::uint64_t const t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

double TinyRandom::uniform() {
  return static_cast<double>(next_u64() >> 11) * 0x1p-53;
}

std::int64_t TinyRandom::below(std::int64_t const n) {
  // Modulo bias is below 2^-40 for the table sizes used here; irrelevant for random weights.
  return static_cast<std::int64_t>(next_u64() % static_cast<std::uint64_t>(n));
}

double TinyRandom::normal(double const mean, double const stddev) {
  if (has_spare_) {
    has_spare_ = false;
    return mean + stddev * spare_normal_;
  }
  double const u1 = 1.0 - uniform();  // (0, 1]: log stays finite
  double const u2 = uniform();
  double const radius = std::sqrt(-2.0 * std::log(u1));
  double const angle = 2.0 * std::numbers::pi * u2;
  spare_normal_ = radius * std::sin(angle);
  has_spare_ = true;
  return mean + stddev * radius * std::cos(angle);
}

}  // namespace gcmoe::tiny
