// bench_routing: the CUDA MoE router (kernels/moe/routing.h) on the three families' real shapes,
// T in {1, 16, 32, 64, 128, 256, 4096}: checked against the CPU reference (T <= 256), timed by
// CUDA-graph replay (events, warm-up, median), with the byte floor (gate weights + activations
// over the measured copy rate), the fp32 FLOP floor (datasheet 67 TFLOP/s) and the 3xTF32 one
// (three tensor products per term at the datasheet's dense 494.7 TFLOP/s). Torch peer:
// bench/moe/routing_torch.py; scripts/gpu/run.sh runs both and merges
// (bench/moe/routing_report.py).
//
// Usage: bench_routing [--out FILE] [--reps 50] [--commit SHA]
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "bench/common/bench_exit.h"
#include "bench/common/floor_kernels.h"
#include "bench/common/gpu_timing.h"
#include "engine/backends/cuda/device_buffer.h"
#include "engine/common/cuda_check.h"
#include "kernels/moe/router_ref.h"
#include "kernels/moe/routing.h"

namespace gcmoe::bench {
namespace {

using cuda::DeviceBuffer;
using kernels::RouterParams;
using kernels::RouterShape;

struct Family {
  char const* name;
  std::int32_t hidden;
  std::int32_t experts;
  std::int32_t top_k;
  RouterParams params;
  bool hashed;
  float bias_lo;
  float bias_hi;
};

std::vector<float> uniform(std::size_t n, std::uint64_t seed, float lo, float hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) {
    x = d(rng);
  }
  return v;
}

Status run(std::string const& out_path, int reps, std::string const& commit) {
  cudaStream_t stream = nullptr;
  GCMOE_CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  GCMOE_ASSIGN_OR_RETURN(MemoryCeilings const ceilings, measure_memory_ceilings(stream));
  double const gbps = ceilings.sm_copy_gbps;
  constexpr double kFp32Flops = 67e12;  // H200 datasheet, non-tensor fp32
  // H200 datasheet dense TF32 tensor rate; the 3xTF32 GEMM (T > 16) issues 3 products per term.
  constexpr double kTf32Flops = 494.7e12;
  std::vector<Family> const families = {
      {"glm5.2", 6144, 256, 8, kernels::glm5_router_params(), false, 6.817f, 7.063f},
      {"deepseek_v4.1", 5120, 384, 6, kernels::deepseek_v4_router_params(), false, 0.0f, 57.0f},
      {"deepseek_v4_hash", 4096, 256, 6, kernels::deepseek_v4_router_params(), true, 0.0f, 0.0f},
  };
  nlohmann::json cases = nlohmann::json::array();
  std::size_t bad_total = 0;
  fmt::print("copy kernel {:.0f} GB/s\n", gbps);
  for (Family const& f : families) {
    for (std::int32_t const tokens : {1, 16, 32, 64, 128, 256, 4096}) {
      RouterShape const shape{
          .num_tokens = tokens, .hidden = f.hidden, .num_experts = f.experts, .top_k = f.top_k};
      auto const th = static_cast<std::size_t>(tokens) * static_cast<std::size_t>(f.hidden);
      auto const eh = static_cast<std::size_t>(f.experts) * static_cast<std::size_t>(f.hidden);
      float const w = 2.0f / std::sqrt(static_cast<float>(f.hidden));
      std::vector<float> const x = uniform(th, 11 + static_cast<std::uint64_t>(tokens), -1, 1);
      std::vector<float> const gate = uniform(eh, 12, -w, w);
      std::vector<float> const bias =
          f.hashed ? std::vector<float>{}
                   : uniform(static_cast<std::size_t>(f.experts), 13, f.bias_lo, f.bias_hi);
      std::vector<std::int32_t> table;
      std::vector<std::int32_t> token_ids;
      if (f.hashed) {
        std::mt19937_64 rng(14);
        constexpr std::int32_t kVocab = 129280;
        table.resize(static_cast<std::size_t>(kVocab) * static_cast<std::size_t>(f.top_k));
        for (std::size_t r = 0; r < static_cast<std::size_t>(kVocab); ++r) {
          for (std::size_t j = 0; j < static_cast<std::size_t>(f.top_k); ++j) {
            // Distinct per row: stride through the experts from a random start.
            table[r * static_cast<std::size_t>(f.top_k) + j] = static_cast<std::int32_t>(
                (r * 7 + j * 41 + rng() % 5) % static_cast<std::size_t>(f.experts));
          }
        }
        for (std::int32_t t = 0; t < tokens; ++t) {
          token_ids.push_back(static_cast<std::int32_t>(rng() % kVocab));
        }
      }
      GCMOE_ASSIGN_OR_RETURN(auto d_x, DeviceBuffer<float>::allocate(x.size()));
      GCMOE_ASSIGN_OR_RETURN(auto d_gate, DeviceBuffer<float>::allocate(gate.size()));
      GCMOE_ASSIGN_OR_RETURN(auto d_bias, DeviceBuffer<float>::allocate(bias.size()));
      GCMOE_ASSIGN_OR_RETURN(auto d_table, DeviceBuffer<std::int32_t>::allocate(table.size()));
      GCMOE_ASSIGN_OR_RETURN(auto d_tokens, DeviceBuffer<std::int32_t>::allocate(token_ids.size()));
      GCMOE_RETURN_IF_ERROR(d_x.copy_from_host(x));
      GCMOE_RETURN_IF_ERROR(d_gate.copy_from_host(gate));
      if (!bias.empty()) {
        GCMOE_RETURN_IF_ERROR(d_bias.copy_from_host(bias));
      }
      if (f.hashed) {
        GCMOE_RETURN_IF_ERROR(d_table.copy_from_host(table));
        GCMOE_RETURN_IF_ERROR(d_tokens.copy_from_host(token_ids));
      }
      auto const slots = static_cast<std::size_t>(tokens) * static_cast<std::size_t>(f.top_k);
      GCMOE_ASSIGN_OR_RETURN(auto d_ids, DeviceBuffer<std::int32_t>::allocate(slots));
      GCMOE_ASSIGN_OR_RETURN(auto d_w, DeviceBuffer<float>::allocate(slots));
      std::size_t const ws_bytes = kernels::router_workspace_bytes(shape);
      GCMOE_ASSIGN_OR_RETURN(auto d_ws, DeviceBuffer<unsigned char>::allocate(ws_bytes));
      kernels::RouterDeviceInputs const inputs{
          .x = d_x.data(),
          .gate_weight = d_gate.data(),
          .bias = bias.empty() ? nullptr : d_bias.data(),
          .token_ids = f.hashed ? d_tokens.data() : nullptr,
          .hash_table = f.hashed ? d_table.data() : nullptr,
      };
      kernels::RouterDeviceOutputs const outputs{.topk_ids = d_ids.data(),
                                                 .topk_weights = d_w.data()};
      auto call = [&]() -> Status {
        return kernels::route(inputs, shape, f.params, outputs, d_ws.data(), ws_bytes, stream);
      };
      // Selection check against the CPU reference (hidden x experts x tokens MACs in double:
      // only up to 256 tokens here; the gpu test covers the rest).
      long long mismatched_tokens = -1;
      if (tokens <= 256) {
        GCMOE_RETURN_IF_ERROR(call());
        GCMOE_CHECK_CUDA(cudaStreamSynchronize(stream));
        std::vector<std::int32_t> ids(slots);
        GCMOE_RETURN_IF_ERROR(d_ids.copy_to_host(ids));
        GCMOE_ASSIGN_OR_RETURN(auto const ref, kernels::router_ref({.x = x,
                                                                    .gate_weight = gate,
                                                                    .bias = bias,
                                                                    .token_ids = token_ids,
                                                                    .hash_table = table},
                                                                   shape, f.params));
        mismatched_tokens = 0;
        for (std::size_t t = 0; t < static_cast<std::size_t>(tokens); ++t) {
          mismatched_tokens +=
              std::equal(ids.begin() + static_cast<std::ptrdiff_t>(t * f.top_k),
                         ids.begin() + static_cast<std::ptrdiff_t>((t + 1) * f.top_k),
                         ref.topk_ids.begin() + static_cast<std::ptrdiff_t>(t * f.top_k))
                  ? 0
                  : 1;
        }
        bad_total += static_cast<std::size_t>(mismatched_tokens);
      }
      int const per_graph = tokens >= 4096 ? 5 : 20;
      GCMOE_ASSIGN_OR_RETURN(double const us, time_graph(stream, per_graph, reps, call));
      double const bytes = 4.0 * (static_cast<double>(eh) + static_cast<double>(th)) +
                           8.0 * static_cast<double>(slots);
      double const flops = 2.0 * static_cast<double>(th) * f.experts;
      double const floor_us = std::max(bytes / (gbps * 1e9), flops / kFp32Flops) * 1e6;
      double const tensor_floor_us = std::max(bytes / (gbps * 1e9), 3.0 * flops / kTf32Flops) * 1e6;
      fmt::print(
          "{:>16} T={:>5} H={} E={} k={} | gcmoe {:8.2f} us | floor {:6.2f} us "
          "(bytes {:.2f}, fp32 {:.2f}, 3xtf32 {:.2f}) | mismatched tokens {}\n",
          f.name, tokens, f.hidden, f.experts, f.top_k, us, floor_us, bytes / (gbps * 1e9) * 1e6,
          flops / kFp32Flops * 1e6, 3.0 * flops / kTf32Flops * 1e6, mismatched_tokens);
      std::fflush(stdout);
      cases.push_back({{"family", f.name},
                       {"T", tokens},
                       {"hidden", f.hidden},
                       {"experts", f.experts},
                       {"top_k", f.top_k},
                       {"gcmoe_us", us},
                       {"floor_us", floor_us},
                       {"floor_3xtf32_us", tensor_floor_us},
                       {"floor_bytes", bytes},
                       {"flops", flops},
                       {"mismatched_tokens", mismatched_tokens}});
    }
  }
  nlohmann::json const doc = {
      {"bench", "routing_cuda"},
      {"git_commit", commit},
      {"copy_gbps", gbps},
      {"fp32_flops_datasheet", kFp32Flops},
      {"tf32_flops_datasheet", kTf32Flops},
      {"reps", reps},
      {"timing", "CUDA-graph replay of per_graph calls, median / per_graph"},
      {"mismatched_tokens_total", bad_total},
      {"cases", cases}};
  std::ofstream(out_path) << doc.dump(2) << "\n";
  fmt::print("wrote {}\n", out_path);
  GCMOE_CHECK_CUDA(cudaStreamDestroy(stream));
  return bad_total == 0 ? Status() : internal_error("router selection differs from the reference");
}

}  // namespace
}  // namespace gcmoe::bench

int main(int argc, char** argv) {
  std::string out = "routing_cuda.json";
  std::string commit = "unknown";
  int reps = 50;
  CLI::App app{"bench_routing: the CUDA MoE router on the three families' shapes"};
  app.add_option("--out", out, "JSON output file");
  app.add_option("--reps", reps, "timed repetitions per point")->check(CLI::Range(1, 10000));
  app.add_option("--commit", commit, "commit the binary was built from");
  CLI11_PARSE(app, argc, argv);
  return gcmoe::bench::exit_code("bench_routing", gcmoe::bench::run(out, reps, commit));
}
