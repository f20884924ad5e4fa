#include "bench/common/gpu_timing.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstddef>

#include "bench/common/device_fill.h"
#include "bench/common/floor_kernels.h"
#include "bench/common/read_stream_kernels.h"
#include "engine/backends/cuda/device_buffer.h"
#include "engine/common/cuda_check.h"

namespace gcmoe::bench {
namespace {

// RAII for the graph, its executable and a pair of events.
struct GraphRun {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  GraphRun() = default;
  GraphRun(GraphRun const&) = delete;
  GraphRun& operator=(GraphRun const&) = delete;
  ~GraphRun() {
    if (exec != nullptr) {
      cudaGraphExecDestroy(exec);
    }
    if (graph != nullptr) {
      cudaGraphDestroy(graph);
    }
    if (start != nullptr) {
      cudaEventDestroy(start);
    }
    if (stop != nullptr) {
      cudaEventDestroy(stop);
    }
  }
};

}  // namespace

StatusOr<double> time_graph(cudaStream_t stream, int per_graph, int reps,
                            std::function<Status()> const& body) {
  GraphRun run;
  GCMOE_CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  Status captured;
  for (int i = 0; i < per_graph && captured.ok(); ++i) {
    captured = body();
  }
  GCMOE_CHECK_CUDA(cudaStreamEndCapture(stream, &run.graph));
  GCMOE_RETURN_IF_ERROR(captured);
  GCMOE_CHECK_CUDA(cudaGraphInstantiate(&run.exec, run.graph, 0));
  GCMOE_ASSIGN_OR_RETURN(double const us, time_launches(stream, reps, [&]() -> Status {
                           GCMOE_CHECK_CUDA(cudaGraphLaunch(run.exec, stream));
                           return Status();
                         }));
  return us / per_graph;
}

StatusOr<ColumnSample> time_graph_sampled(GpuClockSampler& clock, cudaStream_t stream, int reps,
                                          int units, std::function<Status()> const& body) {
  clock.start();
  StatusOr<double> const us = time_graph(stream, 1, reps, body);
  ClockStats const clocks = clock.stop();
  GCMOE_RETURN_IF_ERROR(us.status());
  return ColumnSample{.us = *us / units, .clock = clocks};
}

StatusOr<double> time_launches(cudaStream_t stream, int reps,
                               std::function<Status()> const& launch) {
  GraphRun run;  // its events only
  for (int i = 0; i < 3; ++i) {
    GCMOE_RETURN_IF_ERROR(launch());
  }
  GCMOE_CHECK_CUDA(cudaStreamSynchronize(stream));
  GCMOE_CHECK_CUDA(cudaEventCreate(&run.start));
  GCMOE_CHECK_CUDA(cudaEventCreate(&run.stop));
  std::vector<double> us;
  for (int r = 0; r < reps; ++r) {
    GCMOE_CHECK_CUDA(cudaEventRecord(run.start, stream));
    GCMOE_RETURN_IF_ERROR(launch());
    GCMOE_CHECK_CUDA(cudaEventRecord(run.stop, stream));
    GCMOE_CHECK_CUDA(cudaEventSynchronize(run.stop));
    float ms = 0.0f;
    GCMOE_CHECK_CUDA(cudaEventElapsedTime(&ms, run.start, run.stop));
    us.push_back(static_cast<double>(ms) * 1000.0);
  }
  return upper_median(us);
}

StatusOr<double> copy_bandwidth_gbps(cudaStream_t stream) {
  std::size_t const bytes = std::size_t{512} << 20;
  GCMOE_ASSIGN_OR_RETURN(auto src, cuda::DeviceBuffer<unsigned char>::allocate(bytes));
  GCMOE_ASSIGN_OR_RETURN(auto dst, cuda::DeviceBuffer<unsigned char>::allocate(bytes));
  GCMOE_RETURN_IF_ERROR(src.fill_bytes(0x5a));
  GCMOE_RETURN_IF_ERROR(dst.fill_bytes(0x11));
  GCMOE_ASSIGN_OR_RETURN(double const us, time_graph(stream, 1, 20, [&]() -> Status {
                           GCMOE_CHECK_CUDA(cudaMemcpyAsync(dst.data(), src.data(), bytes,
                                                            cudaMemcpyDeviceToDevice, stream));
                           return Status();
                         }));
  return 2.0 * static_cast<double>(bytes) / (us * 1e-6) / 1e9;
}

double MemoryCeilings::best() const {
  return std::max({memcpy_gbps, sm_copy_gbps, sm_read_gbps, sm_bulk_read_gbps});
}

StatusOr<MemoryCeilings> measure_memory_ceilings(cudaStream_t stream) {
  MemoryCeilings ceilings;
  GCMOE_ASSIGN_OR_RETURN(ceilings.memcpy_gbps, copy_bandwidth_gbps(stream));
  std::int64_t const bytes = std::int64_t{1} << 30;
  int device = 0;
  GCMOE_CHECK_CUDA(cudaGetDevice(&device));
  int sms = 0;
  GCMOE_CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  // The load stream at 8 blocks of 512 per SM, 4 loads in flight per thread; the bulk stream at 2
  // CTAs per SM with 3 chunks each: the best shapes of bench_memory_ceiling on one H200.
  LoadStreamShape const load{.blocks = 8 * sms, .threads = 512, .unroll = 4, .streaming = true};
  int const bulk_blocks = 2 * sms;
  constexpr int kBulkStages = 3;
  GCMOE_ASSIGN_OR_RETURN(auto src, cuda::DeviceBuffer<std::uint8_t>::allocate(bytes));
  GCMOE_ASSIGN_OR_RETURN(auto dst, cuda::DeviceBuffer<std::uint8_t>::allocate(bytes));
  GCMOE_ASSIGN_OR_RETURN(auto partial, cuda::DeviceBuffer<uint4>::allocate(load.blocks));
  GCMOE_ASSIGN_OR_RETURN(auto bulk_partial, cuda::DeviceBuffer<uint4>::allocate(bulk_blocks));
  GCMOE_RETURN_IF_ERROR(fill_random_e4m3(src.data(), bytes, 77, stream));
  // Each stream once before the captures: a launch that fails (a shape, the shared-memory limit)
  // fails here, not inside a capture.
  GCMOE_RETURN_IF_ERROR(launch_load_stream(src.data(), bytes, partial.data(), load, stream));
  GCMOE_RETURN_IF_ERROR(
      launch_bulk_stream(src.data(), bytes, bulk_partial.data(), bulk_blocks, kBulkStages, stream));

  GCMOE_ASSIGN_OR_RETURN(double const copy_us, time_graph(stream, 1, 20, [&]() -> Status {
                           return launch_sm_copy(dst.data(), src.data(), bytes, stream);
                         }));
  GCMOE_ASSIGN_OR_RETURN(double const read_us, time_graph(stream, 1, 20, [&]() -> Status {
                           return launch_load_stream(src.data(), bytes, partial.data(), load,
                                                     stream);
                         }));
  GCMOE_ASSIGN_OR_RETURN(double const bulk_us, time_graph(stream, 1, 20, [&]() -> Status {
                           return launch_bulk_stream(src.data(), bytes, bulk_partial.data(),
                                                     bulk_blocks, kBulkStages, stream);
                         }));
  GCMOE_CHECK_CUDA(cudaStreamSynchronize(stream));

  // CPU references: the copy is byte-identical, each stream's partials xor to the host xor.
  std::vector<std::uint8_t> host_src(static_cast<std::size_t>(bytes));
  std::vector<std::uint8_t> host_dst(static_cast<std::size_t>(bytes));
  GCMOE_RETURN_IF_ERROR(src.copy_to_host(host_src));
  GCMOE_RETURN_IF_ERROR(dst.copy_to_host(host_dst));
  GCMOE_CHECK_INTERNAL(host_src == host_dst, "SM copy kernel output differs from its input");
  std::array<std::uint32_t, 4> const want = host_xor16(host_src);
  GCMOE_ASSIGN_OR_RETURN(auto const read_xor, xor_of_partials(partial.data(), load.blocks));
  GCMOE_CHECK_INTERNAL(read_xor == want, "SM read stream xor differs from the CPU reference");
  GCMOE_ASSIGN_OR_RETURN(auto const bulk_xor, xor_of_partials(bulk_partial.data(), bulk_blocks));
  GCMOE_CHECK_INTERNAL(bulk_xor == want, "bulk read stream xor differs from the CPU reference");
  ceilings.sm_copy_gbps = 2.0 * static_cast<double>(bytes) / (copy_us * 1e-6) / 1e9;
  ceilings.sm_read_gbps = static_cast<double>(bytes) / (read_us * 1e-6) / 1e9;
  ceilings.sm_bulk_read_gbps = static_cast<double>(bytes) / (bulk_us * 1e-6) / 1e9;
  return ceilings;
}

std::string ceilings_summary(MemoryCeilings const& c) {
  return fmt::format("cudaMemcpy {:.0f}, SM copy {:.0f}, SM read {:.0f}, bulk read {:.0f} GB/s",
                     c.memcpy_gbps, c.sm_copy_gbps, c.sm_read_gbps, c.sm_bulk_read_gbps);
}

nlohmann::json ceilings_json(MemoryCeilings const& c) {
  return {{"memcpy", c.memcpy_gbps},
          {"sm_copy", c.sm_copy_gbps},
          {"sm_read", c.sm_read_gbps},
          {"sm_bulk_read", c.sm_bulk_read_gbps},
          {"best", c.best()}};
}

}  // namespace gcmoe::bench
