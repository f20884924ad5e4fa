#pragma once
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11; the
// Random123 reference), a counter-based RNG: the output is a pure function of (counter, key), so
// a request's random draw depends only on its own seed and decode step — never on which other
// requests share the batch, the batch order, or the rank it runs on.
//
// gcmoe keys it with the request seed (64 bits → key words lo, hi) and counts with the
// 0-based index of the output token being sampled (64 bits → counter words 0, 1); counter
// words 2 and 3 select independent streams for future draws at the same step (0 = the token).

#include <array>
#include <cstdint>

namespace gcmoe::sampling {

using PhiloxCounter = std::array<std::uint32_t, 4>;
using PhiloxKey = std::array<std::uint32_t, 2>;

// The raw 10-round block function (matches Random123's philox4x32 known-answer vectors).
PhiloxCounter philox4x32_10(PhiloxCounter counter, PhiloxKey key);

// A uniform double in [0, 1) with 53 random bits for (seed, step, stream).
double philox_uniform(std::uint64_t seed, std::uint64_t step, std::uint32_t stream = 0);

}  // namespace gcmoe::sampling
