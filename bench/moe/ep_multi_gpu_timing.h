#pragma once
// The GPUs and the timing loops of bench_ep_multi_gpu: one rank per GPU of the host, each with its
// copy of the layer's weights and inputs, its green-context split and a graph per replay parity;
// every rank's graphs replayed together and timed by the host wall clock (graphs are
// asynchronous; all ranks synchronized at the end).

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "engine/backends/cuda/device_buffer.h"
#include "engine/backends/cuda/graph.h"
#include "engine/backends/cuda/green_context.h"
#include "engine/backends/cuda/stream.h"
#include "engine/common/status.h"
#include "kernels/moe/ep_moe_rank.h"
#include "kernels/moe/gc_partition_plan.h"

namespace gcmoe::bench {

inline constexpr int kEpBenchMaxTokensPerRank = 256;

struct EpBenchGpu {
  int device = 0;
  cuda::DeviceBuffer<std::uint8_t> experts;
  cuda::DeviceBuffer<float> gate, bias, x, out;
  kernels::MoeLayerDeviceWeights weights;
  cuda::SmPartition partition;
  cuda::Stream plain;
  cuda::Event fork, comm_done, side_done;
  cuda::Graph graphs[2];
};

// Peer access between every pair of the first n GPUs.
Status enable_peers(int n);

// Replays every rank's graph `reps` times (parities alternating) on the comm/compute split
// (`gc`) or on the plain stream; wall µs per layer. A rank's error fails the timing.
StatusOr<double> time_replays(std::vector<EpBenchGpu>& gpus, std::vector<kernels::EpMoeRank>& ranks,
                              int reps, bool gc);

// The planned layer (EpGcMoeLayer) on every GPU, each bucket prepared once: µs per layer for each
// of `tokens` (the order every rank replays). timeout_ms: a rank's wait for a peer.
StatusOr<std::vector<double>> time_planned(std::vector<EpBenchGpu>& gpus,
                                           kernels::MoeLayerConfig const& config,
                                           kernels::GcPartitionPlan const& plan,
                                           std::vector<int> const& tokens, int reps,
                                           int timeout_ms);

}  // namespace gcmoe::bench
