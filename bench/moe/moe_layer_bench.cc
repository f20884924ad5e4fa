// bench_moe_layer: one whole MoE layer on one GPU, the sequential baseline
// (kernels/moe/moe_layer_sequential.h: router → align & sort → dispatch → WGMMA expert GEMMs →
// shared expert → combine), at GLM-5.2's shape (H 6144, I 2048, 256 experts, top-8, one shared
// expert of I 2048), for T tokens on one rank. Time is the median CUDA-graph replay of the layer;
// the floor is the bytes the layer must read (the touched experts, the shared expert, the fp32
// router) over the SM read-stream ceiling measured in the same run. Random weights and inputs;
// the touched experts are counted from the layer's own routing.
//
// Usage: bench_moe_layer [--out FILE] [--reps 20] [--commit SHA]
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "bench/common/device_fill.h"
#include "bench/common/gpu_timing.h"
#include "engine/backends/cuda/device_buffer.h"
#include "engine/common/cuda_check.h"
#include "kernels/moe/fp8_expert_wgmma_layout.h"
#include "kernels/moe/moe_layer_sequential.h"

namespace gcmoe::bench {
namespace {

using cuda::DeviceBuffer;
using kernels::PackedExpertSections;

constexpr int kHidden = 6144;
constexpr int kInter = 2048;
constexpr int kExperts = 256;
constexpr int kTopK = 8;
constexpr int kMaxTokens = 256;

struct Options {
  std::string out = "moe_layer.json";
  int reps = 20;
  std::string commit = "unknown";
};

std::int64_t align_up(std::int64_t v) {
  return (v + 255) / 256 * 256;
}

PackedExpertSections sections() {
  PackedExpertSections s;
  std::int64_t const l1_cells = (kInter / 32) * (kHidden / 128);
  std::int64_t const l2_cells = (kHidden / 64) * (kInter / 128);
  s.l1_scales = align_up(l1_cells * kernels::kWgmmaChunkBytes);
  s.l2_codes = s.l1_scales + align_up(l1_cells * 8);
  s.l2_scales = s.l2_codes + align_up(l2_cells * kernels::kWgmmaChunkBytes);
  s.stride = s.l2_scales + align_up(l2_cells * 8);
  return s;
}

// Random e4m3 codes with scale sections of plausible f32 scale_inv values.
Status fill_experts(std::uint8_t* base, int experts, PackedExpertSections const& s,
                    std::uint64_t seed, cudaStream_t stream) {
  GCMOE_RETURN_IF_ERROR(fill_random_e4m3(base, experts * s.stride, seed, stream));
  for (int e = 0; e < experts; ++e) {
    std::uint8_t* const expert = base + e * s.stride;
    GCMOE_RETURN_IF_ERROR(fill_random_floats(reinterpret_cast<float*>(expert + s.l1_scales),
                                             (s.l2_codes - s.l1_scales) / 4, 1e-4f, 3e-4f,
                                             seed + 2 * e + 1, stream));
    GCMOE_RETURN_IF_ERROR(fill_random_floats(reinterpret_cast<float*>(expert + s.l2_scales),
                                             (s.stride - s.l2_scales) / 4, 1e-4f, 3e-4f,
                                             seed + 2 * e + 2, stream));
  }
  return Status();
}

Status run(Options const& options) {
  cudaStream_t stream = nullptr;
  GCMOE_CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  GCMOE_ASSIGN_OR_RETURN(MemoryCeilings const ceilings, measure_memory_ceilings(stream));
  double const ceiling_gbps = ceilings.best();
  PackedExpertSections const s = sections();
  // The routed experts, then the shared expert as expert kExperts.
  GCMOE_ASSIGN_OR_RETURN(auto experts,
                         DeviceBuffer<std::uint8_t>::allocate((kExperts + 1) * s.stride));
  GCMOE_ASSIGN_OR_RETURN(auto gate, DeviceBuffer<float>::allocate(kExperts * kHidden));
  GCMOE_ASSIGN_OR_RETURN(auto bias, DeviceBuffer<float>::allocate(kExperts));
  GCMOE_ASSIGN_OR_RETURN(auto x, DeviceBuffer<float>::allocate(kMaxTokens * kHidden));
  GCMOE_ASSIGN_OR_RETURN(auto out, DeviceBuffer<float>::allocate(kMaxTokens * kHidden));
  GCMOE_RETURN_IF_ERROR(fill_experts(experts.data(), kExperts + 1, s, 11, stream));
  GCMOE_RETURN_IF_ERROR(
      fill_random_floats(gate.data(), kExperts * kHidden, -0.02f, 0.02f, 7, stream));
  GCMOE_RETURN_IF_ERROR(fill_random_floats(bias.data(), kExperts, -0.01f, 0.01f, 8, stream));
  GCMOE_RETURN_IF_ERROR(fill_random_floats(x.data(), kMaxTokens * kHidden, -2.0f, 2.0f, 9, stream));
  kernels::MoeLayerConfig const config = kernels::moe_layer_config(
      kernels::MoeFamily::kGlm52, kHidden, kInter, kExperts, kTopK, /*fp8_activations=*/true);
  GCMOE_ASSIGN_OR_RETURN(auto layer, kernels::MoeLayerSequential::create(config, kMaxTokens));
  kernels::MoeLayerDeviceWeights const weights{.gate_weight = gate.data(),
                                               .bias = bias.data(),
                                               .experts = experts.data(),
                                               .sections = s,
                                               .has_shared = true};
  double const expert_bytes = static_cast<double>(s.stride);
  double const router_bytes = 4.0 * kExperts * kHidden;
  fmt::print("ceiling (SM read) {:.0f} GB/s; {:.2f} MB per expert\n", ceiling_gbps,
             expert_bytes / 1e6);
  fmt::print("{:>4} {:>8} {:>10} {:>10} {:>8}\n", "T", "experts", "time_us", "floor_us",
             "of_floor");
  nlohmann::json points = nlohmann::json::array();
  for (int const tokens : {1, 2, 4, 8, 16, 32, 64, 128, 256}) {
    GCMOE_RETURN_IF_ERROR(layer.run(weights, x.data(), tokens, out.data(), stream));
    std::vector<std::int32_t> ids(static_cast<std::size_t>(tokens) * kTopK);
    GCMOE_CHECK_CUDA(cudaMemcpyAsync(ids.data(), layer.topk_ids(),
                                     ids.size() * sizeof(std::int32_t), cudaMemcpyDeviceToHost,
                                     stream));
    GCMOE_CHECK_CUDA(cudaStreamSynchronize(stream));
    std::set<int> const touched(ids.begin(), ids.end());
    GCMOE_ASSIGN_OR_RETURN(double const us, time_graph(stream, 1, options.reps, [&]() -> Status {
                             return layer.run(weights, x.data(), tokens, out.data(), stream);
                           }));
    double const bytes = (static_cast<double>(touched.size()) + 1.0) * expert_bytes + router_bytes;
    double const floor_us = bytes / (ceiling_gbps * 1e9) * 1e6;
    fmt::print("{:>4} {:>8} {:>10.1f} {:>10.1f} {:>7.2f}x\n", tokens, touched.size(), us, floor_us,
               us / floor_us);
    points.push_back({{"tokens", tokens},
                      {"touched_experts", touched.size()},
                      {"time_us", us},
                      {"bytes", bytes},
                      {"floor_us", floor_us},
                      {"time_over_floor", us / floor_us}});
  }
  cudaDeviceProp prop{};
  GCMOE_CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  nlohmann::json const doc = {
      {"benchmark", "moe_layer"},
      {"implementation",
       "sequential baseline: route, align & sort, dispatch, WGMMA v2.1 L1/L2, "
       "shared expert as expert E in the same GEMM launches, combine; one stream, graph replay"},
      {"model_shape",
       {{"hidden", kHidden},
        {"intermediate", kInter},
        {"experts", kExperts},
        {"top_k", kTopK},
        {"shared_intermediate", kInter}}},
      {"device", prop.name},
      {"commit", options.commit},
      {"ceiling_gbps", ceiling_gbps},
      {"points", points}};
  std::ofstream(options.out) << doc.dump(2) << "\n";
  GCMOE_CHECK_CUDA(cudaStreamDestroy(stream));
  return Status();
}

}  // namespace
}  // namespace gcmoe::bench

int main(int argc, char** argv) {
  gcmoe::bench::Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string const flag = argv[i];
    if (flag == "--out") {
      options.out = argv[i + 1];
    } else if (flag == "--reps") {
      options.reps = std::atoi(argv[i + 1]);
    } else if (flag == "--commit") {
      options.commit = argv[i + 1];
    } else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  gcmoe::Status const status = gcmoe::bench::run(options);
  if (!status.ok()) {
    std::fprintf(stderr, "bench_moe_layer: %s\n", status.to_string().c_str());
    return 1;
  }
  return 0;
}
