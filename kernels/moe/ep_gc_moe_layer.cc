#include "kernels/moe/ep_gc_moe_layer.h"

#include <utility>

#include "engine/common/check.h"
#include "engine/common/cuda_check.h"

namespace gcmoe::kernels {

StatusOr<EpGcMoeLayer> EpGcMoeLayer::create(MoeLayerConfig const& config, int max_tokens, int ranks,
                                            int rank, int device, cuda::SymmetricMemory memory,
                                            EpGcMoeOptions const& options) {
  // Refused, never ignored: the overlapped no-partition body is the single-rank layer's.
  for (GcPartitionStep const& step : options.plan.steps()) {
    GCMOE_CHECK_ARG(!step.overlapped,
                    "expert-parallel GC-MoE: plan step up to {} tokens asks for the overlapped "
                    "body without partition, which only the single-rank layer runs",
                    step.max_tokens);
  }
  GCMOE_CHECK_CUDA(cudaSetDevice(device));
  EpGcMoeLayer layer;
  GCMOE_ASSIGN_OR_RETURN(auto ep,
                         EpMoeRank::create(config, max_tokens, ranks, rank, std::move(memory)));
  layer.rank_.emplace(std::move(ep));
  layer.rank_->set_timeout_ns(options.timeout_ns);
  GCMOE_ASSIGN_OR_RETURN(auto partitions, GcPartitionSet::create(device, options.plan));
  layer.partitions_.emplace(std::move(partitions));
  for (cuda::Event* event : {&layer.fork_, &layer.comm_done_, &layer.side_done_}) {
    GCMOE_ASSIGN_OR_RETURN(*event, cuda::Event::create());
  }
  return layer;
}

Status EpGcMoeLayer::prepare(MoeLayerDeviceWeights const& weights, float const* x, float* out,
                             int num_tokens) {
  GCMOE_CHECK_ARG(num_tokens >= 0, "bucket of {} tokens", num_tokens);
  GCMOE_CHECK_ARG(x != nullptr && out != nullptr, "null layer input or output");
  if (auto const it = buckets_.find(num_tokens); it != buckets_.end()) {
    Bucket const& b = it->second;
    if (b.x == x && b.out == out && b.weights == weights) {
      return Status();
    }
    buckets_.erase(it);
  }
  EpMoeRank::Streams streams{
      .fork = fork_.get(), .comm_done = comm_done_.get(), .side_done = side_done_.get()};
  cuda::SmPartition const* const partition = partitions_->partition_of(num_tokens);
  if (partition != nullptr) {
    streams.compute = reinterpret_cast<cudaStream_t>(partition->compute().stream());
    streams.comm = reinterpret_cast<cudaStream_t>(partition->comm().stream());
    streams.side = reinterpret_cast<cudaStream_t>(partition->compute().side_stream());
    rank_->set_shared_expert_launch(SharedExpertLaunch::kSeparate);
  } else {
    streams.compute = streams.comm = streams.side = partitions_->whole_device();
    rank_->set_shared_expert_launch(plan().step(num_tokens).shared_separate ||
                                            weights.shared_expert != nullptr
                                        ? SharedExpertLaunch::kSeparate
                                        : SharedExpertLaunch::kWithRouted);
  }
  rank_->set_overlap_down(plan().step(num_tokens).overlap_down);
  rank_->set_down_by_rows(plan().step(num_tokens).down_by_rows);
  rank_->set_compute_sms(partitions_->compute_sms(num_tokens));
  Bucket bucket{.weights = weights, .x = x, .out = out, .stream = streams.compute, .graphs = {}};
  // Two captures: each step takes the rank's next parity, so together they cover both.
  for (int i = 0; i < 2; ++i) {
    GCMOE_ASSIGN_OR_RETURN(cuda::Graph graph,
                           cuda::Graph::capture(streams.compute, [&](cudaStream_t) {
                             return rank_->enqueue_step(weights, x, num_tokens, out, streams);
                           }));
    bucket.graphs[static_cast<std::size_t>(rank_->parity())] = std::move(graph);
  }
  buckets_.emplace(num_tokens, std::move(bucket));
  return Status();
}

Status EpGcMoeLayer::replay(int num_tokens) {
  auto const it = buckets_.find(num_tokens);
  GCMOE_CHECK_ARG(it != buckets_.end(), "no graph prepared for {} tokens", num_tokens);
  GCMOE_RETURN_IF_ERROR(partitions_->launch_ordered(
      it->second.graphs[static_cast<std::size_t>(next_parity_)], it->second.stream));
  next_parity_ ^= 1;
  return Status();
}

Status EpGcMoeLayer::synchronize() {
  // The last replay's stream: replays are ordered, and each graph joins its partition's streams
  // back into it (a device synchronization would not wait for them, green_context.h).
  GCMOE_CHECK_CUDA(cudaStreamSynchronize(partitions_->last_stream()));
  return rank_->error();
}

}  // namespace gcmoe::kernels
