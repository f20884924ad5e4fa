#pragma once
// A routed decode batch for the expert FFN benchmarks (bench/moe/expert_ffn_bench.cc,
// mxfp4_expert_ffn_data.cc): tokens pick top-k distinct experts uniformly at random, a rank keeps
// the pairs of its local experts, and the rows come expert-sorted with random FP8 activations.

#include <cuda_runtime.h>

#include <cstdint>

#include "engine/backends/cuda/device_buffer.h"
#include "engine/common/status.h"

namespace gcmoe::bench {

// The routing's shape and the benchmark's model shape.
struct ExpertBatchShape {
  int global_tokens = 0;  // tokens routed over all experts
  int local = 0;          // experts [0, local) belong to the rank; pairs on the others are dropped
  int experts = 0;
  int top_k = 0;
  std::int64_t hidden = 0;
  std::int64_t inter = 0;
};

struct ExpertBatch {
  int rows = 0;  // the rank's (token, expert) pairs
  int active = 0;
  int max_rows_per_expert = 0;
  cuda::DeviceBuffer<std::uint8_t> x, h;         // [rows, H] e4m3, [rows, I] e4m3
  cuda::DeviceBuffer<float> x_scales, h_scales;  // per 128 along K
  cuda::DeviceBuffer<std::uint16_t> y;           // [rows, H] bf16
  cuda::DeviceBuffer<int> offsets, active_experts, num_active;
};

// Buffers for at least one row; x random e4m3 and x_scales in [2e-3, 6e-3) from `seed`
// (seed + 1), the routing from `seed` too.
StatusOr<ExpertBatch> make_expert_batch(ExpertBatchShape const& shape, std::uint64_t seed,
                                        cudaStream_t stream);

}  // namespace gcmoe::bench
