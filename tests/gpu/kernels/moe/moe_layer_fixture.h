#pragma once
// A random tiny MoE layer for the GPU layer tests (sequential baseline and GC-MoE): FP8 experts
// with 128×128 scales packed in the WGMMA layout (the shared expert as expert E) — or MXFP4 routed
// experts (DeepSeek's checkpoint format) with the shared expert in FP8 packed apart — router
// weights and bias, random x, and the CPU reference's result (kernels/moe/moe_layer_ref.h) on the
// dequantized weights.

#include <cstdint>
#include <vector>

#include "engine/backends/cuda/device_buffer.h"
#include "kernels/moe/moe_layer_ref.h"
#include "kernels/moe/moe_layer_sequential.h"

namespace gcmoe::testing {

struct MoeLayerCase {
  kernels::MoeFamily family = kernels::MoeFamily::kGlm52;
  int hidden = 256;
  int inter = 128;
  int experts = 16;
  int top_k = 4;
  int tokens = 1;
  std::uint64_t seed = 1;
  kernels::ExpertWeightFormat format = kernels::ExpertWeightFormat::kFp8Block128;  // routed
};

struct MoeLayerFixture {
  MoeLayerCase c;
  kernels::MoeLayerConfig config;
  std::vector<float> x;         // [T, H]
  kernels::MoeLayerResult ref;  // the CPU reference on x
  // The dequantized weights the reference ran on (spans into host_weights), for reference runs
  // on other inputs.
  kernels::MoeLayerWeights ref_weights;
  std::vector<std::vector<float>> host_weights;
  cuda::DeviceBuffer<float> gate, bias, d_x, d_out;
  cuda::DeviceBuffer<std::uint8_t> experts;
  cuda::DeviceBuffer<std::uint8_t> shared_expert;  // FP8, with MXFP4 routed experts only

  kernels::MoeLayerDeviceWeights weights() const;
  // The device output, copied back.
  std::vector<float> out() const;
  // Tokens whose GPU top-k set (device [T, k]) differs from the reference's.
  int selection_mismatches(std::int32_t const* device_topk_ids) const;
  char const* family_name() const;
};

MoeLayerFixture make_moe_layer_fixture(MoeLayerCase const& c);

// A small layer of DeepSeek-V4.1 semantics (H 384, I 128, 24 experts, top-6) with its routed
// experts in `format`.
MoeLayerCase deepseek_small_case(
    kernels::ExpertWeightFormat format = kernels::ExpertWeightFormat::kFp8Block128);

// Rank `rank`'s share of the fixture's layer under expert parallelism over `ranks`, on the current
// device: the router (the same on every rank), its E/R routed experts (local index 0..E/R-1),
// then the shared expert (shared_index = E/R). Copies from the fixture's device buffers
// (cudaMemcpyDefault: another GPU needs peer access).
struct RankWeights {
  cuda::DeviceBuffer<float> gate, bias;
  cuda::DeviceBuffer<std::uint8_t> experts, shared_expert;
  kernels::MoeLayerDeviceWeights weights;
};
RankWeights upload_rank_weights(MoeLayerFixture const& f, int ranks, int rank);

}  // namespace gcmoe::testing
