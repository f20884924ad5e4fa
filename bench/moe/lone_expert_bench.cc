// bench_lone_expert: one FP8 expert FFN over T tokens, alone on the GPU — DeepSeek-V4.1's shared
// expert (H 5120, I 2304, 35.4 MB), which the MoE layer runs in launches of its own beside the
// MXFP4 routed experts. The pass configuration decides how many CTAs stream it: the policy's
// (kFp8LonePassBands, what launch_fp8_expert_wgmma runs for a fixed expert) and forced ones, each
// column `rows` wide with ceil(T / rows) passes side by side (at most 8; the routed experts'
// kFp8PassBands pick rows8 up to T=8, rows16 to 32, rows64 to 64, rows128 beyond), timed in rounds
// (bench/common/column_rounds.h) against the copy ceiling of the same run. Up to T=128 the policy
// also splits each (tile group, pass) along K over a cluster of CTAs (expert_split_k.cuh): the
// splitS columns force S, `unsplit` none.
//
// Usage: bench_lone_expert [--out FILE] [--reps 30] [--rounds 3] [--commit SHA] [--tokens N]
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/common/bench_exit.h"
#include "bench/common/column_bench_flags.h"
#include "bench/common/column_rounds.h"
#include "bench/common/device_fill.h"
#include "bench/common/gpu_clock_sampler.h"
#include "bench/common/gpu_timing.h"
#include "engine/backends/cuda/device_buffer.h"
#include "engine/common/cuda_check.h"
#include "kernels/moe/fp8_expert_layout.h"
#include "kernels/moe/fp8_expert_wgmma.h"

namespace gcmoe::bench {
namespace {

using cuda::DeviceBuffer;
using kernels::Fp8ExpertGemmArgs;

constexpr std::int64_t kHidden = 5120;
constexpr std::int64_t kInter = 2304;
// Copies of the expert replayed in turn: 4 x 35 MB, more than the 50 MB L2.
constexpr int kCopies = 4;
constexpr int kTokenSweep[] = {1, 2, 4, 8, 16, 32, 64, 128, 256};

struct Options {
  std::string out = "lone_expert.json";
  int reps = 30;
  int rounds = 3;
  std::string commit = "unknown";
  int only_tokens = 0;
};

// A column runs at T <= max_tokens (a K split needs the lone bands' 8- or 16-row passes: T <= 128).
struct Column {
  char const* name;
  kernels::Fp8WgmmaPasses passes;
  int max_tokens = 1 << 20;
};
constexpr Column kColumns[] = {{"policy", {}},
                               {"unsplit", {0, 0, 1}},
                               {"split2", {0, 0, 2}, 128},
                               {"split4", {0, 0, 4}, 128},
                               {"split5", {0, 0, 5}, 128},
                               {"split8", {0, 0, 8}, 32},
                               {"rows8", {8, 0, 1}},
                               {"rows16", {16, 0, 1}},
                               {"rows64", {64, 0, 1}},
                               {"rows128", {128, 0, 1}}};

struct Buffers {
  DeviceBuffer<std::uint8_t> l1, l2, x, h;
  DeviceBuffer<float> l1_scales, l2_scales, x_scales, h_scales;
  DeviceBuffer<std::uint16_t> y;
};

constexpr std::int64_t kL1Tiles = kInter / 8;
constexpr std::int64_t kL2Tiles = kHidden / kernels::kTileRows;
constexpr std::int64_t kL1Stride = kL1Tiles * (kHidden / kernels::kChunkK) * kernels::kChunkBytes;
constexpr std::int64_t kL2Stride = kL2Tiles * (kInter / kernels::kChunkK) * kernels::kChunkBytes;
// One scale per 64-row tile and chunk (the WGMMA layout).
constexpr std::int64_t kL1ScaleStride = kL1Tiles * (kHidden / kernels::kChunkK) / 2;
constexpr std::int64_t kL2ScaleStride = kL2Tiles * (kInter / kernels::kChunkK) / 2;
constexpr double kExpertBytes =
    static_cast<double>(kL1Stride + kL2Stride) + 4.0 * (kL1ScaleStride + kL2ScaleStride);

StatusOr<Buffers> make_buffers(int max_tokens, cudaStream_t stream) {
  Buffers b;
  GCMOE_ASSIGN_OR_RETURN(b.l1, DeviceBuffer<std::uint8_t>::allocate(kCopies * kL1Stride));
  GCMOE_ASSIGN_OR_RETURN(b.l2, DeviceBuffer<std::uint8_t>::allocate(kCopies * kL2Stride));
  GCMOE_ASSIGN_OR_RETURN(b.l1_scales, DeviceBuffer<float>::allocate(kCopies * kL1ScaleStride));
  GCMOE_ASSIGN_OR_RETURN(b.l2_scales, DeviceBuffer<float>::allocate(kCopies * kL2ScaleStride));
  GCMOE_ASSIGN_OR_RETURN(b.x, DeviceBuffer<std::uint8_t>::allocate(max_tokens * kHidden));
  GCMOE_ASSIGN_OR_RETURN(b.x_scales, DeviceBuffer<float>::allocate(max_tokens * (kHidden / 128)));
  GCMOE_ASSIGN_OR_RETURN(b.h, DeviceBuffer<std::uint8_t>::allocate(max_tokens * kInter));
  GCMOE_ASSIGN_OR_RETURN(b.h_scales, DeviceBuffer<float>::allocate(max_tokens * (kInter / 128)));
  GCMOE_ASSIGN_OR_RETURN(b.y, DeviceBuffer<std::uint16_t>::allocate(max_tokens * kHidden));
  GCMOE_RETURN_IF_ERROR(fill_random_e4m3(b.l1.data(), kCopies * kL1Stride, 1, stream));
  GCMOE_RETURN_IF_ERROR(fill_random_e4m3(b.l2.data(), kCopies * kL2Stride, 2, stream));
  GCMOE_RETURN_IF_ERROR(
      fill_random_floats(b.l1_scales.data(), kCopies * kL1ScaleStride, 1e-4f, 3e-4f, 3, stream));
  GCMOE_RETURN_IF_ERROR(
      fill_random_floats(b.l2_scales.data(), kCopies * kL2ScaleStride, 1e-4f, 3e-4f, 4, stream));
  GCMOE_RETURN_IF_ERROR(fill_random_e4m3(b.x.data(), max_tokens * kHidden, 5, stream));
  GCMOE_RETURN_IF_ERROR(
      fill_random_floats(b.x_scales.data(), max_tokens * (kHidden / 128), 2e-3f, 6e-3f, 6, stream));
  GCMOE_CHECK_CUDA(cudaStreamSynchronize(stream));
  return b;
}

// L1 then L2 of copy `copy` over rows [0, tokens), as MoeLayerSequential::experts_shared launches
// the shared expert (fixed expert, no routing inputs).
Status launch_lone(Buffers const& b, int copy, int tokens, kernels::Fp8WgmmaPasses const& passes,
                   cudaStream_t stream) {
  Fp8ExpertGemmArgs a;
  a.stage = kernels::ExpertGemmStage::kGateUp;
  a.weights = b.l1.data() + copy * kL1Stride;
  a.weight_scales = b.l1_scales.data() + copy * kL1ScaleStride;
  a.weight_stride = kL1Stride;
  a.scale_stride = kL1ScaleStride;
  a.tiles = static_cast<int>(kL1Tiles);
  a.chunks = static_cast<int>(kHidden / kernels::kChunkK);
  a.x = b.x.data();
  a.x_scales = b.x_scales.data();
  a.x_rows = tokens;
  a.fixed_expert = 0;
  a.fixed_rows = tokens;
  a.max_active = 1;
  a.rows_per_expert_hint = tokens;
  a.requant = kernels::RequantScale::kPow2;
  a.swiglu_limit = 10.0f;
  a.h = b.h.data();
  a.h_scales = b.h_scales.data();
  GCMOE_RETURN_IF_ERROR(kernels::launch_fp8_expert_wgmma(a, stream, passes));
  Fp8ExpertGemmArgs d = a;
  d.stage = kernels::ExpertGemmStage::kDown;
  d.weights = b.l2.data() + copy * kL2Stride;
  d.weight_scales = b.l2_scales.data() + copy * kL2ScaleStride;
  d.weight_stride = kL2Stride;
  d.scale_stride = kL2ScaleStride;
  d.tiles = static_cast<int>(kL2Tiles);
  d.chunks = static_cast<int>(kInter / kernels::kChunkK);
  d.x = b.h.data();
  d.x_scales = b.h_scales.data();
  d.h = nullptr;
  d.h_scales = nullptr;
  d.y = b.y.data();
  return kernels::launch_fp8_expert_wgmma(d, stream, passes);
}

Status run(Options const& options) {
  cudaStream_t stream = nullptr;
  GCMOE_CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  GCMOE_RETURN_IF_ERROR(kernels::preload_fp8_expert_wgmma());
  GCMOE_ASSIGN_OR_RETURN(MemoryCeilings const ceilings, measure_memory_ceilings(stream));
  double const copy_gbps = ceilings.best();
  GCMOE_ASSIGN_OR_RETURN(Buffers const b, make_buffers(std::end(kTokenSweep)[-1], stream));
  double const floor_us = kExpertBytes / (copy_gbps * 1e9) * 1e6;
  fmt::print("copy {:.0f} GB/s; one expert {:.2f} MB, floor {:.2f} us\n", copy_gbps,
             kExpertBytes / 1e6, floor_us);
  GpuClockSampler clock;
  nlohmann::json points = nlohmann::json::array();
  for (int const tokens : kTokenSweep) {
    if (options.only_tokens != 0 && tokens != options.only_tokens) {
      continue;
    }
    std::vector<Column> run_columns;
    for (Column const& column : kColumns) {
      if (tokens <= column.max_tokens) {
        run_columns.push_back(column);
      }
    }
    GCMOE_ASSIGN_OR_RETURN(
        std::vector<ColumnRounds> const timed,
        time_in_rounds(std::ssize(run_columns), options.rounds, [&](int c) {
          return time_graph_sampled(clock, stream, options.reps, kCopies, [&]() -> Status {
            for (int copy = 0; copy < kCopies; ++copy) {
              GCMOE_RETURN_IF_ERROR(launch_lone(b, copy, tokens, run_columns[c].passes, stream));
            }
            return Status();
          });
        }));
    nlohmann::json columns = nlohmann::json::object();
    fmt::print("T={:>4}", tokens);
    for (std::size_t c = 0; c < run_columns.size(); ++c) {
      double const us = timed[c].median_us();
      fmt::print("  {} {:7.1f} us ({:3.0f}%)", run_columns[c].name, us, 100.0 * floor_us / us);
      columns[run_columns[c].name] = {{"time_us", us},
                                      {"fraction_of_copy", floor_us / us},
                                      {"round_us", timed[c].round_us},
                                      {"clock", clock_json(timed[c].clock)}};
    }
    fmt::print("\n");
    points.push_back({{"tokens", tokens}, {"floor_us", floor_us}, {"columns", columns}});
  }
  nlohmann::json const doc = {
      {"benchmark", "lone_expert"},
      {"shape", {{"hidden", kHidden}, {"intermediate", kInter}}},
      {"columns",
       "policy: kFp8LonePassBands by T with the policy's K split (launch_fp8_expert_wgmma for a "
       "fixed expert); unsplit: the same bands without a K split; splitS: the bands with S CTAs "
       "per (tile group, pass) along K (T <= 128); rowsN: N-row passes, ceil(T / N) side by side "
       "(at most 8), no split"},
      {"commit", options.commit},
      {"copy_gbps", copy_gbps},
      {"expert_bytes", kExpertBytes},
      {"rounds", options.rounds},
      {"reps_per_round", options.reps},
      {"points", points}};
  std::ofstream(options.out) << doc.dump(2) << "\n";
  GCMOE_CHECK_CUDA(cudaStreamDestroy(stream));
  return Status();
}

}  // namespace
}  // namespace gcmoe::bench

int main(int argc, char** argv) {
  gcmoe::bench::Options options;
  CLI::App app{"bench_lone_expert: one FP8 expert FFN alone (V4.1's shared expert) by pass width"};
  gcmoe::bench::add_column_bench_flags(app, options.out, options.reps, options.rounds,
                                       options.commit);
  gcmoe::bench::add_sweep_tokens_flag(app, options.only_tokens, gcmoe::bench::kTokenSweep);
  CLI11_PARSE(app, argc, argv);
  return gcmoe::bench::exit_code("bench_lone_expert", gcmoe::bench::run(options));
}
