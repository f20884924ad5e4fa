#include "bench/moe/ep_multi_gpu_timing.h"

#include <fmt/format.h>

#include <chrono>
#include <utility>

#include "engine/backends/cuda/symmetric_memory.h"
#include "engine/common/check.h"
#include "engine/common/cuda_check.h"
#include "kernels/moe/ep_gc_moe_layer.h"

namespace gcmoe::bench {
namespace {

// 4 warm-up replays, a synchronization, then `reps` replays timed to the end of the next one:
// wall µs per layer (graphs are asynchronous; every rank is synchronized at the end).
template <typename Replay, typename Sync>
StatusOr<double> time_loop(Replay const& replay_all, Sync const& sync_all, int reps) {
  for (int i = 0; i < 4; ++i) {
    GCMOE_RETURN_IF_ERROR(replay_all(i));
  }
  GCMOE_RETURN_IF_ERROR(sync_all());
  auto const start = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) {
    GCMOE_RETURN_IF_ERROR(replay_all(i));
  }
  GCMOE_RETURN_IF_ERROR(sync_all());
  std::chrono::duration<double, std::micro> const elapsed =
      std::chrono::steady_clock::now() - start;
  return elapsed.count() / reps;
}

}  // namespace

Status enable_peers(int n) {
  for (int a = 0; a < n; ++a) {
    GCMOE_CHECK_CUDA(cudaSetDevice(a));
    for (int b = 0; b < n; ++b) {
      if (a != b) {
        cudaError_t const e = cudaDeviceEnablePeerAccess(b, 0);
        if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) {
          return cuda_runtime_status(e, "cudaDeviceEnablePeerAccess", __FILE__, __LINE__);
        }
        cudaGetLastError();
      }
    }
  }
  return Status();
}

// Replays every rank's graph `reps` times (parities alternating); wall µs per layer.
StatusOr<double> time_replays(std::vector<EpBenchGpu>& gpus, std::vector<kernels::EpMoeRank>& ranks,
                              int reps, bool gc) {
  auto const replay_all = [&](int i) -> Status {
    for (auto& g : gpus) {
      GCMOE_CHECK_CUDA(cudaSetDevice(g.device));
      cudaStream_t const s =
          gc ? reinterpret_cast<cudaStream_t>(g.partition.compute().stream()) : g.plain.get();
      GCMOE_RETURN_IF_ERROR(g.graphs[i % 2].launch(s));
    }
    return Status();
  };
  // Every rank's verdict (a fault on one GPU shows up as a deadline on the other).
  auto const sync_all = [&]() -> Status {
    Status first;
    for (std::size_t r = 0; r < gpus.size(); ++r) {
      GCMOE_CHECK_CUDA(cudaSetDevice(gpus[r].device));
      // The partitions' streams explicitly: after a GC-MoE run, a device synchronization alone
      // let the next mode's first replay race the last GC graph's tail (bench/NOTES.md).
      GCMOE_RETURN_IF_ERROR(gpus[r].partition.synchronize());
      GCMOE_CHECK_CUDA(cudaStreamSynchronize(gpus[r].plain.get()));
      Status const s = ranks[r].error();
      if (!s.ok()) {
        fmt::print(stderr, "rank {}: {}\n", r, s.to_string());
        first = first.ok() ? s : first;
      }
    }
    return first;
  };
  return time_loop(replay_all, sync_all, reps);
}

// The planned layer on every GPU: µs per layer for each of `tokens` (the order every rank replays).
StatusOr<std::vector<double>> time_planned(std::vector<EpBenchGpu>& gpus,
                                           kernels::MoeLayerConfig const& config,
                                           kernels::GcPartitionPlan const& plan,
                                           std::vector<int> const& tokens, int reps,
                                           int timeout_ms) {
  int const n = static_cast<int>(gpus.size());
  std::vector<int> devices(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    devices[static_cast<std::size_t>(r)] = gpus[static_cast<std::size_t>(r)].device;
  }
  GCMOE_ASSIGN_OR_RETURN(
      auto memories,
      cuda::SymmetricMemory::allocate_local_group(
          kernels::EpMoeRank::symmetric_bytes(config, kEpBenchMaxTokensPerRank, n), devices));
  std::vector<kernels::EpGcMoeLayer> layers;
  for (int r = 0; r < n; ++r) {
    GCMOE_ASSIGN_OR_RETURN(
        auto layer,
        kernels::EpGcMoeLayer::create(
            config, kEpBenchMaxTokensPerRank, n, r, devices[static_cast<std::size_t>(r)],
            std::move(memories[static_cast<std::size_t>(r)]),
            {.plan = plan, .timeout_ns = static_cast<std::uint64_t>(timeout_ms) * 1000000}));
    layers.push_back(std::move(layer));
  }
  for (int const t : tokens) {
    for (int r = 0; r < n; ++r) {
      EpBenchGpu& g = gpus[static_cast<std::size_t>(r)];
      GCMOE_CHECK_CUDA(cudaSetDevice(g.device));
      GCMOE_RETURN_IF_ERROR(
          layers[static_cast<std::size_t>(r)].prepare(g.weights, g.x.data(), g.out.data(), t));
    }
  }
  auto const sync_all = [&]() -> Status {
    for (int r = 0; r < n; ++r) {
      GCMOE_CHECK_CUDA(cudaSetDevice(devices[static_cast<std::size_t>(r)]));
      GCMOE_RETURN_IF_ERROR(layers[static_cast<std::size_t>(r)].synchronize());
    }
    return Status();
  };
  std::vector<double> us;
  for (int const t : tokens) {
    auto const replay_all = [&](int) -> Status {
      for (int r = 0; r < n; ++r) {
        GCMOE_CHECK_CUDA(cudaSetDevice(devices[static_cast<std::size_t>(r)]));
        GCMOE_RETURN_IF_ERROR(layers[static_cast<std::size_t>(r)].replay(t));
      }
      return Status();
    };
    GCMOE_ASSIGN_OR_RETURN(double const per_layer, time_loop(replay_all, sync_all, reps));
    us.push_back(per_layer);
  }
  return us;
}

}  // namespace gcmoe::bench
