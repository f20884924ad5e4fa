#pragma once
// Timing helpers shared by the GPU benchmarks: CUDA-graph replay timed with events (warm-up,
// median of many replays) and the device-to-device copy rate, the memory ceiling every
// bandwidth-bound kernel is compared with in the same run.

#include <cuda_runtime.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/common/column_rounds.h"
#include "bench/common/gpu_clock_sampler.h"
#include "engine/common/status.h"

namespace gcmoe::bench {

// Captures `per_graph` calls of `body` into one CUDA graph, replays it 3 times to warm up, then
// `reps` times between events; the median time of one call of `body`, in microseconds.
StatusOr<double> time_graph(cudaStream_t stream, int per_graph, int reps,
                            std::function<Status()> const& body);

// time_graph(stream, 1, reps, body) with `clock` sampling the SM clock and power meanwhile: one
// column's timing for time_in_rounds, in µs per `units` (a body that runs 4 routings: 4).
StatusOr<ColumnSample> time_graph_sampled(GpuClockSampler& clock, cudaStream_t stream, int reps,
                                          int units, std::function<Status()> const& body);

// Warms up with 3 calls of `launch`, then times `reps` calls between events on `stream`: the
// median time of one call, in microseconds. For work that is already a graph (replays).
StatusOr<double> time_launches(cudaStream_t stream, int reps,
                               std::function<Status()> const& launch);

// Device-to-device copy rate in GB/s counting bytes read plus bytes written (2 × 512 MiB).
StatusOr<double> copy_bandwidth_gbps(cudaStream_t stream);

// The memory ceilings of one run, in GB/s: cudaMemcpy (copy engines), an SM copy kernel (read +
// written bytes), an SM read-only stream of 16-byte loads, and a read-only stream of bulk copies
// into shared memory (the TMA engine, as the expert GEMMs stream their weights), each over 1 GiB
// and checked against its CPU reference before it is reported. On one H200 the loads read 4194
// GB/s while the FP8 expert GEMM streamed 4600: the bulk stream is there so that the ceiling is
// one (bench/NOTES.md, "The memory ceiling").
struct MemoryCeilings {
  double memcpy_gbps = 0.0;
  double sm_copy_gbps = 0.0;
  double sm_read_gbps = 0.0;
  double sm_bulk_read_gbps = 0.0;
  double best() const;
};
StatusOr<MemoryCeilings> measure_memory_ceilings(cudaStream_t stream);

// "cudaMemcpy A, SM copy B, SM read C, bulk read D GB/s" for a benchmark's header line.
std::string ceilings_summary(MemoryCeilings const& c);
// {"memcpy", "sm_copy", "sm_read", "sm_bulk_read", "best"} in GB/s.
nlohmann::json ceilings_json(MemoryCeilings const& c);

}  // namespace gcmoe::bench
