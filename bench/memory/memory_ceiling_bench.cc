// bench_memory_ceiling: which read-only stream reaches the most HBM bandwidth on this GPU, and
// whether measure_memory_ceilings (what every bandwidth benchmark divides by) finds it. On one
// H200 (2026-12-02, call A) the FP8 expert FFN streamed its weights at 110% of the "SM read"
// ceiling the same run measured (4194 GB/s): that ceiling was no ceiling.
//
// Streams over 1 GiB of random bytes (each checked against the CPU's xor of the buffer):
// 16-byte loads in a grid-stride loop at several grids, block sizes, unrolls and cache hints; bulk
// copies (TMA without a tensor map, as the expert GEMMs stream weights) into a shared-memory ring
// of 3 to 6 32 KB chunks per CTA. Each is timed as a graph replay (median of --reps) in --rounds
// rounds, the order reversed every other round (column_rounds.h), with the SM clock; before them
// measure_memory_ceilings runs once cold (as the benchmarks call it, first thing), and after them
// once warm.
//
// Usage: bench_memory_ceiling [--out FILE] [--reps 20] [--rounds 5] [--commit SHA]
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "bench/common/bench_exit.h"
#include "bench/common/column_bench_flags.h"
#include "bench/common/column_rounds.h"
#include "bench/common/device_fill.h"
#include "bench/common/gpu_clock_sampler.h"
#include "bench/common/gpu_timing.h"
#include "bench/common/read_stream_kernels.h"
#include "engine/backends/cuda/device_buffer.h"
#include "engine/common/check.h"
#include "engine/common/cuda_check.h"

namespace gcmoe::bench {
namespace {

using cuda::DeviceBuffer;

constexpr std::int64_t kBytes = std::int64_t{1} << 30;

struct Options {
  std::string out = "memory_ceiling.json";
  int reps = 20;
  int rounds = 5;
  std::string commit = "unknown";
};

struct Stream {
  std::string name;
  bool bulk = false;
  LoadStreamShape load;  // when !bulk
  int bulk_blocks = 0;   // when bulk
  int bulk_stages = 0;
  int blocks() const { return bulk ? bulk_blocks : load.blocks; }
};

std::vector<Stream> streams(int sms) {
  std::vector<Stream> s;
  auto const load = [&](int per_sm, int threads, int unroll, bool streaming) {
    s.push_back({.name = fmt::format("ld_{}_u{}_{}x{}", streaming ? "cs" : "nc", unroll,
                                     per_sm * sms, threads),
                 .load = {.blocks = per_sm * sms,
                          .threads = threads,
                          .unroll = unroll,
                          .streaming = streaming}});
  };
  load(8, 512, 4, true);  // measure_memory_ceilings' SM read stream (for 132 SMs)
  load(4, 512, 4, true);
  load(4, 512, 4, false);
  load(4, 512, 8, true);
  load(4, 512, 8, false);
  load(2, 1024, 8, true);
  load(16, 256, 4, true);
  for (auto const& [per_sm, stages] : {std::pair{1, 4}, std::pair{1, 6}, std::pair{2, 3}}) {
    s.push_back({.name = fmt::format("bulk_{}x{}stages", per_sm * sms, stages),
                 .bulk = true,
                 .load = {},
                 .bulk_blocks = per_sm * sms,
                 .bulk_stages = stages});
  }
  return s;
}

Status launch(Stream const& s, void const* src, uint4* partials, cudaStream_t stream) {
  return s.bulk ? launch_bulk_stream(src, kBytes, partials, s.bulk_blocks, s.bulk_stages, stream)
                : launch_load_stream(src, kBytes, partials, s.load, stream);
}

Status run(Options const& options) {
  cudaStream_t stream = nullptr;
  GCMOE_CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  GCMOE_ASSIGN_OR_RETURN(MemoryCeilings const cold, measure_memory_ceilings(stream));
  fmt::print("measure_memory_ceilings, cold: {:.0f} GB/s best\n", cold.best());
  cudaDeviceProp prop{};
  GCMOE_CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::vector<Stream> const list = streams(prop.multiProcessorCount);
  GCMOE_ASSIGN_OR_RETURN(auto src, DeviceBuffer<std::uint8_t>::allocate(kBytes));
  GCMOE_ASSIGN_OR_RETURN(auto partials,
                         DeviceBuffer<uint4>::allocate(32 * prop.multiProcessorCount));
  GCMOE_RETURN_IF_ERROR(fill_random_e4m3(src.data(), kBytes, 77, stream));
  GCMOE_CHECK_CUDA(cudaStreamSynchronize(stream));
  std::vector<std::uint8_t> host(static_cast<std::size_t>(kBytes));
  GCMOE_RETURN_IF_ERROR(src.copy_to_host(host));
  std::array<std::uint32_t, 4> const want = host_xor16(host);
  // Each stream once, checked against the CPU's xor.
  for (Stream const& s : list) {
    GCMOE_RETURN_IF_ERROR(launch(s, src.data(), partials.data(), stream));
    GCMOE_CHECK_CUDA(cudaStreamSynchronize(stream));
    GCMOE_ASSIGN_OR_RETURN(auto const got, xor_of_partials(partials.data(), s.blocks()));
    GCMOE_CHECK_INTERNAL(got == want, "{}: xor differs from the CPU reference", s.name);
  }
  GpuClockSampler clock;
  GCMOE_ASSIGN_OR_RETURN(
      std::vector<ColumnRounds> const timed,
      time_in_rounds(static_cast<int>(list.size()), options.rounds,
                     [&](int c) -> StatusOr<ColumnSample> {
                       Stream const& s = list[static_cast<std::size_t>(c)];
                       return time_graph_sampled(clock, stream, options.reps, 1, [&]() -> Status {
                         return launch(s, src.data(), partials.data(), stream);
                       });
                     }));
  GCMOE_ASSIGN_OR_RETURN(MemoryCeilings const warm, measure_memory_ceilings(stream));
  fmt::print("measure_memory_ceilings, warm: {:.0f} GB/s best\n", warm.best());
  nlohmann::json rows = nlohmann::json::array();
  fmt::print("{:<24} {:>9} {:>9} {:>7}\n", "stream", "GB/s", "best", "sm_MHz");
  for (std::size_t i = 0; i < list.size(); ++i) {
    double const median_us = timed[i].median_us();
    double const best_us = *std::min_element(timed[i].round_us.begin(), timed[i].round_us.end());
    double const gbps = static_cast<double>(kBytes) / (median_us * 1e-6) / 1e9;
    double const best_gbps = static_cast<double>(kBytes) / (best_us * 1e-6) / 1e9;
    fmt::print("{:<24} {:>9.0f} {:>9.0f} {:>7.0f}\n", list[i].name, gbps, best_gbps,
               timed[i].clock.sm_mhz_mean);
    rows.push_back({{"stream", list[i].name},
                    {"gbps", gbps},
                    {"best_round_gbps", best_gbps},
                    {"round_us", timed[i].round_us},
                    {"clock", clock_json(timed[i].clock)}});
  }
  nlohmann::json const doc = {{"benchmark", "memory_ceiling"},
                              {"device", prop.name},
                              {"commit", options.commit},
                              {"bytes", kBytes},
                              {"reps", options.reps},
                              {"rounds", options.rounds},
                              {"measure_memory_ceilings_cold", ceilings_json(cold)},
                              {"measure_memory_ceilings_warm", ceilings_json(warm)},
                              {"streams", rows}};
  std::ofstream(options.out) << doc.dump(2) << "\n";
  GCMOE_CHECK_CUDA(cudaStreamDestroy(stream));
  return Status();
}

}  // namespace
}  // namespace gcmoe::bench

int main(int argc, char** argv) {
  gcmoe::bench::Options options;
  CLI::App app{"bench_memory_ceiling: read-only streams against measure_memory_ceilings"};
  gcmoe::bench::add_column_bench_flags(app, options.out, options.reps, options.rounds,
                                       options.commit);
  CLI11_PARSE(app, argc, argv);
  return gcmoe::bench::exit_code("bench_memory_ceiling", gcmoe::bench::run(options));
}
