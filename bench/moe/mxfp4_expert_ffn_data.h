#pragma once
// bench_mxfp4_expert_ffn's data (bench/moe/mxfp4_expert_ffn_bench.cc): every expert's packed
// MXFP4 weights at DeepSeek-V4.1-Flash's shape, and the routed batches of one scenario and T.

#include <cuda_runtime.h>

#include <cstdint>

#include "bench/common/expert_batch.h"
#include "engine/backends/cuda/device_buffer.h"
#include "engine/common/status.h"
#include "kernels/moe/mxfp4_expert_wgmma_layout.h"

namespace gcmoe::bench::mxfp4_ffn {

inline constexpr std::int64_t kHidden = 5120;
inline constexpr std::int64_t kInter = 2304;
inline constexpr int kExperts = 384;
inline constexpr int kTopK = 6;

// All kExperts experts' L1 and L2 code images and scale words (random codes, checkpoint-like
// scales; every expert's scales alike).
struct Weights {
  cuda::DeviceBuffer<std::uint8_t> l1, l2;
  cuda::DeviceBuffer<std::uint32_t> l1_scales, l2_scales;
  std::int64_t l1_tiles = kInter / 32;
  std::int64_t l1_chunks = kHidden / 128;
  std::int64_t l2_tiles = kHidden / 64;
  std::int64_t l2_chunks = kInter / 128;
  std::int64_t l1_images = l1_tiles * l1_chunks;
  std::int64_t l2_images = l2_tiles * l2_chunks;
  std::int64_t l1_stride() const { return l1_images * kernels::kMxCodeImageBytes; }
  std::int64_t l2_stride() const { return l2_images * kernels::kMxCodeImageBytes; }
  // One expert's scale words per projection (images and row images).
  std::int64_t l1_scale_stride() const {
    return kernels::mxfp4_wgmma_scale_words(l1_tiles, l1_chunks);
  }
  std::int64_t l2_scale_stride() const {
    return kernels::mxfp4_wgmma_scale_words(l2_tiles, l2_chunks);
  }
  double bytes_per_expert() const {
    return static_cast<double>(l1_stride() + l2_stride()) +
           4.0 * static_cast<double>(l1_scale_stride() + l2_scale_stride());
  }
};
StatusOr<Weights> make_weights(cudaStream_t stream);

// One routing's expert-sorted rows and their buffers, with the routing weights and the hint.
struct Batch : ExpertBatch {
  // What the layer and the EP rank configure the GEMM for (kernels/moe/expert_rows_hint.h).
  int rows_hint = 0;
  cuda::DeviceBuffer<float> route;  // [rows] routing weights
};
// `global_tokens` tokens each pick top-6 distinct experts of 384; pairs on experts >= `local`
// belong to other ranks and are dropped.
StatusOr<Batch> make_batch(int global_tokens, int local, std::uint64_t seed, cudaStream_t stream);

}  // namespace gcmoe::bench::mxfp4_ffn
