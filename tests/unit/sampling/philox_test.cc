#include "engine/sampling/philox.h"

#include <cmath>
#include <set>

#include "tests/support/catch.h"

namespace gcmoe::sampling {
namespace {

TEST_CASE("philox4x32-10 matches Random123's known-answer vectors") {
  // Random123 kat_vectors: counter[4] key[2] -> output[4].
  CHECK(philox4x32_10({0, 0, 0, 0}, {0, 0}) ==
        PhiloxCounter{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  CHECK(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}) ==
        PhiloxCounter{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  CHECK(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}) ==
        PhiloxCounter{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
}

TEST_CASE("philox_uniform is a pure function of (seed, step, stream) in [0, 1)") {
  CHECK(philox_uniform(42, 7) == philox_uniform(42, 7));
  CHECK(philox_uniform(42, 7) != philox_uniform(43, 7));
  CHECK(philox_uniform(42, 7) != philox_uniform(42, 8));
  CHECK(philox_uniform(42, 7, 0) != philox_uniform(42, 7, 1));
  // The high 32 bits of seed and step matter too.
  CHECK(philox_uniform(42, 7) != philox_uniform(42 + (1ull << 32), 7));
  CHECK(philox_uniform(42, 7) != philox_uniform(42, 7 + (1ull << 32)));
}

TEST_CASE("philox_uniform moments and buckets look uniform") {
  constexpr int kDraws = 100000;
  constexpr int kBuckets = 10;
  int counts[kBuckets] = {};
  double sum = 0.0;
  double sum_sq = 0.0;
  std::set<double> distinct;
  for (int i = 0; i < kDraws; ++i) {
    double const u = philox_uniform(1234, static_cast<std::uint64_t>(i));
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
    sum += u;
    sum_sq += u * u;
    ++counts[static_cast<int>(u * kBuckets)];
    distinct.insert(u);
  }
  // Mean 1/2 (sd of the mean ~0.0009) and variance 1/12, with loose bounds.
  CHECK(std::abs(sum / kDraws - 0.5) < 0.005);
  CHECK(std::abs(sum_sq / kDraws - sum * sum / kDraws / kDraws - 1.0 / 12.0) < 0.002);
  // Chi-square with 9 degrees of freedom: 27.88 is the 0.001 critical value.
  double chi2 = 0.0;
  for (int const c : counts) {
    double const expected = static_cast<double>(kDraws) / kBuckets;
    chi2 += (c - expected) * (c - expected) / expected;
  }
  CHECK(chi2 < 27.88);
  CHECK(distinct.size() == static_cast<std::size_t>(kDraws));
}

}  // namespace
}  // namespace gcmoe::sampling
