#pragma once
// Random benchmark data made on the device (gigabytes of expert weights would take minutes to
// draw on the host): a counter hash of (seed, index), never all zeros.

#include <cuda_runtime.h>

#include <cstdint>

#include "engine/common/status.h"

namespace gcmoe::bench {

// Random e4m3 codes with no NaN (0x7f / 0xff are remapped), all exponents present.
Status fill_random_e4m3(std::uint8_t* data, std::int64_t count, std::uint64_t seed,
                        cudaStream_t stream);

// Uniform floats in [lo, hi).
Status fill_random_floats(float* data, std::int64_t count, float lo, float hi, std::uint64_t seed,
                          cudaStream_t stream);

}  // namespace gcmoe::bench
