#pragma once
// N expert-parallel ranks (ep_moe_rank.h) in one process on one GPU — how the cross-rank protocol
// is tested and measured without N GPUs. The group owns the ranks and one comm/compute green-
// context split; a step enqueues every rank's steps in the one order that lets ranks sharing a GPU
// wait on each other: every wait is for work enqueued earlier on the other partition's stream or
// earlier on its own (routing → counts → dispatch on comm; receive plan → experts → shared expert
// → combine on compute). One process per GPU runs the same rank steps in its own order.
// A step can be captured as CUDA graphs (one per buffer parity, replayed alternately).

#include <cuda_runtime.h>

#include <span>
#include <vector>

#include "engine/backends/cuda/graph.h"
#include "engine/backends/cuda/green_context.h"
#include "engine/backends/cuda/stream.h"
#include "kernels/moe/ep_moe_rank.h"

namespace gcmoe::kernels {

class EpVirtualGroup {
 public:
  // weights[r]: rank r's router and packed experts (its E/R routed ones, then the shared one).
  static StatusOr<EpVirtualGroup> create(MoeLayerConfig const& config, int max_tokens,
                                         std::span<MoeLayerDeviceWeights const> weights, int device,
                                         int comm_sms);

  // Enqueues one step of every rank: x[r] [tokens[r], H] in, out[r] out.
  Status step(std::span<float const* const> x, std::span<int const> tokens,
              std::span<float* const> out);
  // Captures a step with these buffers as two graphs (both parities); replay() alternates them.
  Status capture(std::span<float const* const> x, std::span<int const> tokens,
                 std::span<float* const> out);
  Status replay();
  // Waits, then DEADLINE_EXCEEDED if any rank's wait timed out.
  Status synchronize();

  cudaStream_t stream() const;
  int ranks() const { return static_cast<int>(ranks_.size()); }
  EpMoeRank& rank(int r) { return ranks_[static_cast<std::size_t>(r)]; }

 private:
  EpVirtualGroup() = default;

  std::vector<EpMoeRank> ranks_;
  std::vector<MoeLayerDeviceWeights> weights_;
  cuda::SmPartition partition_;
  cuda::Event fork_, join_;
  cuda::Graph graphs_[2];
  int next_graph_ = 0;
};

}  // namespace gcmoe::kernels
