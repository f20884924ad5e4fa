#pragma once
// The GC-MoE operator for one MoE layer on one GPU (one rank; issue 6, first slice): the GPU split
// by green contexts into a small communication partition and a large compute partition, one CUDA
// graph per token-count bucket:
//
//   compute:       router → align & sort → active list ─┬─ routed L1 ─(PDL)─ routed L2 ─┬─ combine
//   comm:          shared dispatch ─────────────────────┴─ routed dispatch ─────────────┤
//   compute side:  shared L1 ─(PDL)─ shared L2 ─────────────────────────────────────────┘
//
// Dispatch (gather + FP8 quantization) and the expert GEMM run concurrently: the dispatch
// release-stores each row's epoch flag as it lands, the GEMM streams its first weight stages at
// once and acquires the flags of each pass's rows before reading them (the token-ring
// handshake). The shared expert needs no routing, so its dispatch and GEMM start with the router.
// Each L2 starts while its L1 drains (programmatic dependent launch), in buckets whose plan step
// says so acquiring L1's rows pass by pass (GcPartitionStep::down_by_rows). The combine advances
// the epoch on the device, so the next replay needs no clean pass and no host work: flags only
// grow, a row is ready in replay e once its flag reads e (the replay parity is epoch & 1).
//
// The sequential baseline is the same steps on one stream over the whole device
// (MoeLayerSequential::run), captured the same way: `sequential_graph`.
// The comm partition's size can differ per token-count bucket (GcPartitionPlan), including no
// partition at all, where the bucket's graph runs over the whole device: the same body (the
// shared expert on a second stream; GcPartitionStep::overlapped) or the sequential graph. Replays
// of buckets on different partitions are ordered by an event at each switch. Cross-rank dispatch
// and combine: kernels/moe/ep_moe_rank.h.

#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <optional>

#include "engine/backends/cuda/device_buffer.h"
#include "engine/backends/cuda/graph.h"
#include "engine/backends/cuda/green_context.h"
#include "engine/backends/cuda/stream.h"
#include "engine/common/status.h"
#include "kernels/moe/gc_partition_plan.h"
#include "kernels/moe/gc_partition_set.h"
#include "kernels/moe/moe_layer_sequential.h"

namespace gcmoe::kernels {

struct GcMoeOptions {
  int comm_sms = 16;  // asked; the driver rounds up (Hopper: multiples of 8, at least 8)
  // Per token-count bucket (overrides comm_sms when set); 0 SMs: no partition, the whole device
  // (GcPartitionStep::overlapped says which graph runs there).
  std::optional<GcPartitionPlan> plan = std::nullopt;
  // L2 starts while L1 runs (programmatic dependent launch); false turns it off in every bucket,
  // true leaves it to the plan's steps (GcPartitionStep::overlap_down).
  bool overlap_down = true;
  // The small kernels' launch chains (MoeLayerSync::chain) in every GC-MoE graph, whatever the
  // step says of L2; false turns them off (an ablation). The sequential graph has none.
  bool chain = true;
  // false: each dispatch runs on its GEMM's stream right before it (no concurrency between them;
  // what the comm partition buys is measured against this).
  bool dispatch_on_comm = true;
  std::uint64_t wait_timeout_ns =
      2'000'000'000;  // a GEMM wait past this ends the layer with an error
};

class GcMoeLayer {
 public:
  static StatusOr<GcMoeLayer> create(MoeLayerConfig const& config, int max_tokens, int device,
                                     GcMoeOptions const& options);

  // Captures the graph for `num_tokens` tokens reading x and writing out, once per bucket: the
  // pointers are baked into the graph; calling again with other weights, x or out re-captures it.
  Status prepare(MoeLayerDeviceWeights const& weights, float const* x, float* out, int num_tokens);
  // Replays the bucket's graph on its partition's compute stream (the whole-device stream for a
  // bucket without partition), after the previous replay; no host synchronization.
  Status replay(int num_tokens);
  // Waits for the replays; DEADLINE_EXCEEDED when a GEMM wait timed out (output garbage).
  Status synchronize();

  // The baseline: the same steps on one stream over the whole device, as one graph.
  StatusOr<cuda::Graph> sequential_graph(MoeLayerDeviceWeights const& weights, float const* x,
                                         float* out, int num_tokens, cudaStream_t stream,
                                         SharedExpertLaunch shared);

  // The stream the last replay went to (before any: the first partition's compute stream, or the
  // whole-device stream when the plan has no partition); work after it goes there.
  cudaStream_t stream() const { return partitions_->last_stream(); }
  // The bucket's partition as the driver made it: comm SMs (0 for none) and compute SMs.
  int comm_sms(int num_tokens) const { return partitions_->comm_sms(num_tokens); }
  int compute_sms(int num_tokens) const { return partitions_->compute_sms(num_tokens); }
  GcPartitionPlan const& plan() const { return partitions_->plan(); }
  MoeLayerSequential& steps() { return *steps_; }
  // Kernel nodes of a prepared bucket's graph.
  StatusOr<int> kernel_nodes(int num_tokens) const;
  // The L1 -> L2 row counters of down_by_rows steps, zero between runs (tests).
  cuda::DeviceBuffer<int> const& rows_done() const { return rows_done_; }

 private:
  GcMoeLayer() = default;

  GcMoeOptions options_;
  std::optional<GcPartitionSet> partitions_;  // always set once created
  std::optional<MoeLayerSequential> steps_;   // always set once created
  // rows_done_: the L1 -> L2 counters of the buckets whose step has down_by_rows (the routed and
  // the shared pair use rows of their own; the combine zeroes both after the pairs' L2s).
  cuda::DeviceBuffer<int> ready_rows_, rows_done_, layout_ready_, epoch_;
  cuda::DeviceBuffer<unsigned> error_;
  cuda::Event start_, comm_done_, side_done_;  // the graph's fork and join points
  cuda::Stream whole_side_;  // the shared expert's stream in overlapped buckets without partition
  // Captures the GC-MoE body on `compute` (its graph's stream) with the shared expert on `side`
  // and the dispatches on `comm` (nullptr: each on its GEMM's stream).
  StatusOr<cuda::Graph> capture_overlapped(MoeLayerDeviceWeights const& weights, float const* x,
                                           float* out, int num_tokens, cudaStream_t compute,
                                           cudaStream_t side, cudaStream_t comm);
  // What a bucket's graph was captured with.
  struct Bucket {
    MoeLayerDeviceWeights weights;
    float const* x = nullptr;
    float* out = nullptr;
    cudaStream_t stream = nullptr;
    cuda::Graph graph;
  };
  std::map<int, Bucket> graphs_;  // by token count
};

}  // namespace gcmoe::kernels
