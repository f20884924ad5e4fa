#pragma once
// bfloat16: the top 16 bits of an fp32. Norms, embeddings, routers and BF16 projections of the
// releases are stored this way.

#include <cstdint>

namespace gcmoe::formats {

// Exact widening.
float decode_bf16(std::uint16_t bits);

// Round-to-nearest-even; overflow rounds to ±inf as IEEE does; NaN stays a quiet NaN of the same
// sign (0x7fc0 / 0xffc0 for the default NaN).
std::uint16_t encode_bf16(float value);

}  // namespace gcmoe::formats
