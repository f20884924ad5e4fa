#pragma once
// What a GcPartitionPlan becomes on one device: one green-context split (cuda::SmPartition) per
// distinct comm size the plan asks for, a whole-device stream for buckets without partition, and
// the ordering of graph replays that move between those streams (an event at each switch, so a
// replay never overtakes the previous one and the host never waits). The one-GPU layer
// (gc_moe_layer.h) and the expert-parallel rank's (ep_gc_moe_layer.h) both run on one.

#include <cuda_runtime.h>

#include <map>

#include "engine/backends/cuda/graph.h"
#include "engine/backends/cuda/green_context.h"
#include "engine/backends/cuda/stream.h"
#include "engine/common/status.h"
#include "kernels/moe/gc_partition_plan.h"

namespace gcmoe::kernels {

class GcPartitionSet {
 public:
  static StatusOr<GcPartitionSet> create(int device, GcPartitionPlan const& plan);

  // The bucket's split, or null where the plan says none (the whole device).
  cuda::SmPartition const* partition_of(int num_tokens) const;
  int comm_sms(int num_tokens) const;     // as the driver made it; 0 without partition
  int compute_sms(int num_tokens) const;  // the whole device's SMs without partition
  cudaStream_t whole_device() const { return whole_device_.get(); }
  // Launches `graph` on `stream` after the previous launch through this set, whatever its stream.
  Status launch_ordered(cuda::Graph const& graph, cudaStream_t stream);
  // Where the last launch went (before any: the first partition's compute stream, or the
  // whole-device stream when the plan has none); waiting for it waits for every launch.
  cudaStream_t last_stream() const { return last_stream_; }
  GcPartitionPlan const& plan() const { return plan_; }

 private:
  GcPartitionSet() = default;

  GcPartitionPlan plan_ = GcPartitionPlan::uniform(16);
  std::map<int, cuda::SmPartition> partitions_;  // by the comm size the plan asks for
  cuda::Stream whole_device_;
  int device_sms_ = 0;
  cuda::Event switch_;
  cudaStream_t last_stream_ = nullptr;
};

}  // namespace gcmoe::kernels
