#pragma once
// The GC-MoE operator for one expert-parallel rank (issue 6): what gc_moe_layer.h is for one GPU,
// over the rank's steps (kernels/moe/ep_moe_rank.h). Per token-count bucket the plan
// (GcPartitionPlan) names a comm partition — the count exchange and dispatch on its comm green
// context, routing, GEMM and combine on its compute green context, the shared expert on the
// compute partition's side stream — or none: the sequential placement on one whole-device stream,
// the shared expert where the plan says (in its own launches when it is packed apart). A bucket's
// step is captured as two CUDA graphs, one per receive-buffer parity; replays alternate the parity
// whatever the bucket, are ordered by an event where the stream changes, and the host never
// waits between them. Every rank of a group must replay the same buckets in the same order (steps
// pair up by epoch and parity), and use either this layer's replays or the rank's own steps, not
// both.

#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <map>
#include <optional>

#include "engine/backends/cuda/graph.h"
#include "engine/backends/cuda/green_context.h"
#include "engine/backends/cuda/stream.h"
#include "engine/backends/cuda/symmetric_memory.h"
#include "engine/common/status.h"
#include "kernels/moe/ep_moe_rank.h"
#include "kernels/moe/gc_partition_plan.h"
#include "kernels/moe/gc_partition_set.h"

namespace gcmoe::kernels {

struct EpGcMoeOptions {
  GcPartitionPlan plan = GcPartitionPlan::uniform(16);
  std::uint64_t timeout_ns = 2'000'000'000;  // a wait for a peer, before the step's error
};

class EpGcMoeLayer {
 public:
  // As EpMoeRank::create, on `device` (made current), with one green-context split per distinct
  // comm size of the plan.
  static StatusOr<EpGcMoeLayer> create(MoeLayerConfig const& config, int max_tokens, int ranks,
                                       int rank, int device, cuda::SymmetricMemory memory,
                                       EpGcMoeOptions const& options);

  // Captures the bucket's two graphs (x, out and weights baked in; other pointers re-capture).
  Status prepare(MoeLayerDeviceWeights const& weights, float const* x, float* out, int num_tokens);
  // The bucket's graph of the next parity, after the previous replay; no host synchronization.
  Status replay(int num_tokens);
  // Waits for every stream the layer uses; DEADLINE_EXCEEDED (EpMoeRank::error) when a wait for a
  // peer passed its deadline.
  Status synchronize();

  // As the driver made it; 0 without partition.
  int comm_sms(int num_tokens) const { return partitions_->comm_sms(num_tokens); }
  GcPartitionPlan const& plan() const { return partitions_->plan(); }
  EpMoeRank& rank() { return *rank_; }

 private:
  EpGcMoeLayer() = default;

  std::optional<EpMoeRank> rank_;             // always set once created
  std::optional<GcPartitionSet> partitions_;  // always set once created
  cuda::Event fork_, comm_done_, side_done_;  // the step graph's fork and join points
  int next_parity_ = 0;
  struct Bucket {
    MoeLayerDeviceWeights weights;
    float const* x = nullptr;
    float* out = nullptr;
    cudaStream_t stream = nullptr;
    std::array<cuda::Graph, 2> graphs;  // by parity
  };
  std::map<int, Bucket> buckets_;  // by token count
};

}  // namespace gcmoe::kernels
