#pragma once
// What the expert-GEMM GPU tests (FP8: fp8_expert_ffn_case.h, MXFP4: mxfp4_expert_wgmma_test.cc)
// share around their kernels: a routed batch laid out as the GEMMs read it (each expert's rows
// together, in expert order), the CPU reference over that layout, and the late release of the
// token ring's readiness counters.

#include <cuda_runtime.h>

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "kernels/moe/expert_ffn_ref.h"

namespace gcmoe::testing {

struct ExpertSlots {
  std::vector<int> offsets = {0};  // [E + 1] each expert's first row
  std::vector<int> active;         // the experts with rows, ascending
  std::vector<float> x;            // [rows, H] each row's token
  std::vector<float> weight;       // [rows] routing weights, uniform in [0.05, 1)
  std::int64_t rows() const { return static_cast<std::int64_t>(weight.size()); }
};

// tokens_of[e]: the tokens routed to expert e; x: [T, hidden]. Draws one weight per row from rng.
ExpertSlots group_by_expert(std::vector<std::vector<int>> const& tokens_of,
                            std::vector<float> const& x, std::int64_t hidden, std::mt19937_64& rng);

// expert_ffn_ref over every expert's rows: [rows, H].
std::vector<float> expert_ffn_reference(ExpertSlots const& slots,
                                        std::span<kernels::DenseExpertWeights const> experts,
                                        kernels::ExpertFfnOptions const& options);

// The kernel on `waiting` must still be running 50 ms after its launch (it waits for the rows):
// then `blocks` counters at `ready` are set to `epoch` from another stream.
void release_rows_late(cudaStream_t waiting, int* ready, int blocks, int epoch);

}  // namespace gcmoe::testing
