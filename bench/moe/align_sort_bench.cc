// bench_align_sort: MoE align & sort on the GPU. The multi-block kernel (auto path and forced
// multi-block), the fused one-block kernel and the simple single-block baseline, each checked
// against the CPU reference and timed by CUDA-graph replay (events, warm-up, median), with the
// memory-traffic floor from a device-to-device copy and the empty-kernel launch floor measured in
// the same run. The torch peer is bench/moe/align_sort_torch.py; align_sort_report.py merges.
//
// Usage: bench_align_sort [--out FILE] [--block-size 64] [--reps 50] [--commit SHA] [--shape T,k,E]
// --shape T,k,E: that one shape of the grid only (T 1, 16, 256, 4096, 16384 or 65536; k 6 or 8;
// E 256 or 384), for a profiler run.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
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
#include "kernels/moe/align_sort.h"
#include "kernels/moe/align_sort_buffers.h"
#include "kernels/moe/align_sort_ref.h"

namespace gcmoe::bench {
namespace {

using cuda::DeviceBuffer;
using kernels::AlignSortOutputs;
using kernels::AlignSortPath;
using kernels::AlignSortResult;
using kernels::AlignSortShape;
using Ids = std::vector<std::int32_t>;

// The grid of shapes; --shape picks one point of it.
constexpr std::array<std::int32_t, 6> kTokenGrid = {1, 16, 256, 4096, 16384, 65536};
constexpr std::array<std::int32_t, 2> kTopKGrid = {6, 8};
constexpr std::array<std::int32_t, 2> kExpertGrid = {256, 384};

struct Options {
  std::string out = "align_sort_cuda.json";
  std::int32_t block_size = 64;
  int reps = 50;
  std::string commit = "unknown";
  // --shape T,k,E: that one shape only (for a profiler run); default the full grid.
  std::int32_t only_tokens = 0;
  std::int32_t only_top_k = 0;
  std::int32_t only_experts = 0;
};

enum class Impl { kAuto, kMultiBlock, kOneBlock, kSingleBlock };

char const* impl_name(Impl impl) {
  switch (impl) {
    case Impl::kAuto:
      return "auto";
    case Impl::kMultiBlock:
      return "multi_block";
    case Impl::kOneBlock:
      return "one_block";
    case Impl::kSingleBlock:
      return "single_block";
  }
  return "?";
}

Ids distinct_routing(AlignSortShape const& shape, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::int32_t> pool(static_cast<std::size_t>(shape.num_experts));
  for (std::size_t e = 0; e < pool.size(); ++e) {
    pool[e] = static_cast<std::int32_t>(e);
  }
  Ids ids(static_cast<std::size_t>(shape.num_pairs()));
  for (std::size_t t = 0; t < static_cast<std::size_t>(shape.num_tokens); ++t) {
    for (std::size_t j = 0; j < static_cast<std::size_t>(shape.top_k); ++j) {
      std::size_t const pick = j + rng() % (pool.size() - j);
      std::swap(pool[j], pool[pick]);
      ids[t * static_cast<std::size_t>(shape.top_k) + j] = pool[j];
    }
  }
  return ids;
}

// Runs once on poisoned outputs and counts the elements that differ from the reference.
StatusOr<std::size_t> check_once(kernels::AlignSortBuffers& o, AlignSortResult const& ref,
                                 auto&& run) {
  GCMOE_RETURN_IF_ERROR(o.poison());
  GCMOE_RETURN_IF_ERROR(run());
  GCMOE_ASSIGN_OR_RETURN(AlignSortResult const got, o.read_back());
  return kernels::count_mismatches(got, ref);
}

StatusOr<double> sm_clock_mhz(cudaStream_t stream) {
  GCMOE_ASSIGN_OR_RETURN(auto probe, DeviceBuffer<long long>::allocate(2));
  GCMOE_RETURN_IF_ERROR(launch_clock_probe(probe.data(), stream));
  GCMOE_CHECK_CUDA(cudaStreamSynchronize(stream));
  std::vector<long long> v(2);
  GCMOE_RETURN_IF_ERROR(probe.copy_to_host(v));
  return static_cast<double>(v[0]) / static_cast<double>(v[1]) * 1000.0;
}

StatusOr<nlohmann::json> machine_info() {
  int device = 0;
  GCMOE_CHECK_CUDA(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  GCMOE_CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  int driver = 0;
  GCMOE_CHECK_CUDA(cudaDriverGetVersion(&driver));
  int clock_khz = 0;
  GCMOE_CHECK_CUDA(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  return nlohmann::json{{"gpu", prop.name},
                        {"sm_count", prop.multiProcessorCount},
                        {"l2_bytes", prop.l2CacheSize},
                        {"sm_clock_khz", clock_khz},
                        {"cuda_driver", driver},
                        {"cuda_runtime", CUDART_VERSION}};
}

Status run(Options const& options) {
  cudaStream_t stream = nullptr;
  GCMOE_CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  GCMOE_ASSIGN_OR_RETURN(MemoryCeilings const copy, measure_memory_ceilings(stream));
  double const copy_gbps = copy.sm_copy_gbps;
  GCMOE_ASSIGN_OR_RETURN(double const clock_start_mhz, sm_clock_mhz(stream));
  GCMOE_ASSIGN_OR_RETURN(double const launch_us,
                         time_graph(stream, 20, options.reps,
                                    [&]() -> Status { return launch_empty_kernel(stream); }));
  fmt::print(
      "d2d copy kernel {:.0f} GB/s, cudaMemcpyAsync {:.0f} GB/s (read+write); empty-kernel launch "
      "in a graph {:.2f} us; SM clock {:.0f} MHz\n",
      copy.sm_copy_gbps, copy.memcpy_gbps, launch_us, clock_start_mhz);

  std::size_t const ws_bytes = kernels::align_sort_workspace_bytes(kernels::kAlignSortMaxExperts);
  GCMOE_ASSIGN_OR_RETURN(auto workspace, DeviceBuffer<unsigned char>::allocate(ws_bytes));
  GCMOE_RETURN_IF_ERROR(kernels::align_sort_init_workspace(workspace.data(), ws_bytes, stream));

  nlohmann::json cases = nlohmann::json::array();
  std::size_t all_mismatches = 0;
  for (std::int32_t const tokens : kTokenGrid) {
    for (std::int32_t const top_k : kTopKGrid) {
      for (std::int32_t const experts : kExpertGrid) {
        if (options.only_tokens > 0 &&
            (tokens != options.only_tokens || top_k != options.only_top_k ||
             experts != options.only_experts)) {
          continue;
        }
        AlignSortShape const shape{.num_tokens = tokens,
                                   .top_k = top_k,
                                   .num_experts = experts,
                                   .block_size = options.block_size};
        Ids const ids = distinct_routing(shape, 17 + static_cast<std::uint64_t>(tokens) * 31 +
                                                    static_cast<std::uint64_t>(top_k * experts));
        GCMOE_ASSIGN_OR_RETURN(AlignSortResult const ref, kernels::align_sort_ref(ids, shape));
        GCMOE_ASSIGN_OR_RETURN(auto d_ids, DeviceBuffer<std::int32_t>::allocate(ids.size()));
        GCMOE_RETURN_IF_ERROR(d_ids.copy_from_host(ids));
        GCMOE_ASSIGN_OR_RETURN(kernels::AlignSortBuffers out,
                               kernels::AlignSortBuffers::allocate(shape));
        std::int64_t const n = shape.num_pairs();
        int const per_graph = n <= 16384 ? 20 : (n <= 131072 ? 5 : 2);
        // Fewest bytes: read the ids once; write each padded row, each block's expert, the
        // offsets and the total once.
        double const floor_bytes = 4.0 * static_cast<double>(n) + 4.0 * ref.total_padded +
                                   4.0 * (ref.total_padded / shape.block_size) +
                                   4.0 * (experts + 1) + 4.0;
        nlohmann::json record = {{"T", tokens},
                                 {"top_k", top_k},
                                 {"experts", experts},
                                 {"block_size", shape.block_size},
                                 {"pairs", n},
                                 {"total_padded", ref.total_padded},
                                 {"per_graph", per_graph},
                                 {"floor_bytes", floor_bytes},
                                 {"floor_us", floor_bytes / (copy_gbps * 1e9) * 1e6}};
        std::string line = fmt::format("T={:>5} k={} E={} |", tokens, top_k, experts);
        for (Impl const impl :
             {Impl::kAuto, Impl::kMultiBlock, Impl::kOneBlock, Impl::kSingleBlock}) {
          auto call = [&]() -> Status {
            switch (impl) {
              case Impl::kAuto:
                return kernels::align_sort(d_ids.data(), shape, out.view(), workspace.data(),
                                           ws_bytes, stream, AlignSortPath::kAuto);
              case Impl::kMultiBlock:
                return kernels::align_sort(d_ids.data(), shape, out.view(), workspace.data(),
                                           ws_bytes, stream, AlignSortPath::kMultiBlock);
              case Impl::kOneBlock:
                return kernels::align_sort(d_ids.data(), shape, out.view(), workspace.data(),
                                           ws_bytes, stream, AlignSortPath::kOneBlock);
              case Impl::kSingleBlock:
                return kernels::align_sort_single_block(d_ids.data(), shape, out.view(), stream);
            }
            return internal_error("unknown implementation");
          };
          GCMOE_ASSIGN_OR_RETURN(std::size_t const mismatches, check_once(out, ref, call));
          GCMOE_ASSIGN_OR_RETURN(double const us,
                                 time_graph(stream, per_graph, options.reps, call));
          all_mismatches += mismatches;
          record[impl_name(impl)] = {{"us", us}, {"mismatches", mismatches}};
          line += fmt::format(" {} {:.2f}us ({} bad)", impl_name(impl), us, mismatches);
        }
        fmt::print("{} | floor {:.2f}us\n", line, record["floor_us"].get<double>());
        std::fflush(stdout);
        cases.push_back(record);
      }
    }
  }
  GCMOE_ASSIGN_OR_RETURN(double const clock_end_mhz, sm_clock_mhz(stream));
  GCMOE_ASSIGN_OR_RETURN(nlohmann::json machine, machine_info());
  machine["sm_clock_probe_mhz"] = {clock_start_mhz, clock_end_mhz};
  nlohmann::json const doc = {{"bench", "align_sort_cuda"},
                              {"git_commit", options.commit},
                              {"machine", machine},
                              {"timing",
                               "CUDA-graph replay of per_graph back-to-back calls, 3 warm-up "
                               "replays, median over reps of (replay time / per_graph); inputs "
                               "L2-resident (as after the router)"},
                              {"reps", options.reps},
                              {"routing", "k distinct uniform experts per token"},
                              {"copy_gbps", copy_gbps},
                              {"memcpy_gbps", copy.memcpy_gbps},
                              {"sm_read_gbps", copy.sm_read_gbps},
                              {"empty_launch_us", launch_us},
                              {"mismatches_total", all_mismatches},
                              {"cases", cases}};
  std::ofstream(options.out) << doc.dump(2) << "\n";
  fmt::print("wrote {} (mismatches over all cases: {})\n", options.out, all_mismatches);
  GCMOE_CHECK_CUDA(cudaStreamDestroy(stream));
  if (all_mismatches != 0) {
    return internal_error(fmt::format("{} mismatches against the CPU reference", all_mismatches));
  }
  return Status();
}

}  // namespace
}  // namespace gcmoe::bench

int main(int argc, char** argv) {
  gcmoe::bench::Options options;
  CLI::App app{"bench_align_sort: MoE align & sort, multi-block vs one-block vs single-block"};
  app.add_option("--out", options.out, "JSON output file");
  app.add_option("--block-size", options.block_size, "rows per expert block (padding unit)")
      ->check(CLI::Range(1, gcmoe::kernels::kAlignSortMaxBlockSize));
  app.add_option("--reps", options.reps, "timed repetitions per point")
      ->check(CLI::Range(1, 10000));
  app.add_option("--commit", options.commit, "commit the binary was built from");
  // A shape off the grid would time nothing and still write a JSON file: refused instead.
  std::vector<std::int32_t> shape;
  app.add_option("--shape", shape, "only this shape of the grid: T,k,E (default: the whole grid)")
      ->delimiter(',')
      ->expected(3)
      ->check(CLI::IsMember(gcmoe::bench::kTokenGrid).application_index(0))
      ->check(CLI::IsMember(gcmoe::bench::kTopKGrid).application_index(1))
      ->check(CLI::IsMember(gcmoe::bench::kExpertGrid).application_index(2));
  CLI11_PARSE(app, argc, argv);
  if (!shape.empty()) {
    options.only_tokens = shape[0];
    options.only_top_k = shape[1];
    options.only_experts = shape[2];
  }
  return gcmoe::bench::exit_code("bench_align_sort", gcmoe::bench::run(options));
}
