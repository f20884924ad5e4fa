#pragma once
// fp32 dense projection, the one GEMM shape of the CPU step: y[n, o] = Σ_i x[n, i] · W[o, i] with
// W row-major [out, in] as the checkpoints store it (and as torch's nn.Linear computes it).
// Single-threaded; accumulates each dot product in fp32 over 8 interleaved partial sums, in the
// same order whatever the row count (a row's result does not depend on the batch around it).

#include <cstdint>
#include <span>

namespace gcmoe::model::glm {

// x: [rows, in]; w: [out, in]; y: [rows, out] (overwritten). Sizes are the caller's invariant.
void linear(std::span<float const> x, std::span<float const> w, std::int64_t in, std::int64_t out,
            std::span<float> y);

// One dot product of length n, accumulated as linear() does.
float dot(float const* a, float const* b, std::int64_t n);

}  // namespace gcmoe::model::glm
