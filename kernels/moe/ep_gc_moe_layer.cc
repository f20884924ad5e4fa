#include "kernels/moe/ep_gc_moe_layer.h"

#include <utility>

#include "engine/common/check.h"
#include "engine/common/cuda_check.h"

namespace gcmoe::kernels {

StatusOr<EpGcMoeLayer> EpGcMoeLayer::create(MoeLayerConfig const& config, int max_tokens, int ranks,
                                            int rank, int device, cuda::SymmetricMemory memory,
                                            EpGcMoeOptions const& options) {
  GCMOE_CHECK_CUDA(cudaSetDevice(device));
  EpGcMoeLayer layer;
  layer.plan_ = options.plan;
  GCMOE_ASSIGN_OR_RETURN(auto ep,
                         EpMoeRank::create(config, max_tokens, ranks, rank, std::move(memory)));
  layer.rank_.emplace(std::move(ep));
  layer.rank_->set_timeout_ns(options.timeout_ns);
  for (int const sms : layer.plan_.comm_sizes()) {
    GCMOE_ASSIGN_OR_RETURN(auto partition, cuda::SmPartition::create(device, sms));
    layer.partitions_.emplace(sms, std::move(partition));
  }
  GCMOE_ASSIGN_OR_RETURN(layer.whole_device_, cuda::Stream::create());
  for (cuda::Event* event : {&layer.fork_, &layer.comm_done_, &layer.side_done_, &layer.switch_}) {
    GCMOE_ASSIGN_OR_RETURN(*event, cuda::Event::create());
  }
  layer.last_stream_ = layer.whole_device_.get();
  return layer;
}

cuda::SmPartition const* EpGcMoeLayer::partition_of(int num_tokens) const {
  auto const it = partitions_.find(plan_.comm_sms(num_tokens));
  return it == partitions_.end() ? nullptr : &it->second;
}

int EpGcMoeLayer::comm_sms(int num_tokens) const {
  cuda::SmPartition const* const p = partition_of(num_tokens);
  return p == nullptr ? 0 : p->comm().sm_count();
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
  cuda::SmPartition const* const partition = partition_of(num_tokens);
  if (partition != nullptr) {
    streams.compute = reinterpret_cast<cudaStream_t>(partition->compute().stream());
    streams.comm = reinterpret_cast<cudaStream_t>(partition->comm().stream());
    streams.side = reinterpret_cast<cudaStream_t>(partition->compute().side_stream());
    rank_->set_shared_expert_launch(SharedExpertLaunch::kSeparate);
  } else {
    streams.compute = streams.comm = streams.side = whole_device_.get();
    rank_->set_shared_expert_launch(plan_.step(num_tokens).shared_separate ||
                                            weights.shared_expert != nullptr
                                        ? SharedExpertLaunch::kSeparate
                                        : SharedExpertLaunch::kWithRouted);
  }
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
  cudaStream_t const stream = it->second.stream;
  if (stream != last_stream_) {
    GCMOE_RETURN_IF_ERROR(cuda::order_after(switch_.get(), last_stream_, stream));
    last_stream_ = stream;
  }
  GCMOE_RETURN_IF_ERROR(it->second.graphs[static_cast<std::size_t>(next_parity_)].launch(stream));
  next_parity_ ^= 1;
  return Status();
}

Status EpGcMoeLayer::synchronize() {
  // Every partition's streams: a device synchronization does not wait for graphs whose nodes sit
  // in green contexts (green_context.h).
  for (auto const& [sms, partition] : partitions_) {
    GCMOE_RETURN_IF_ERROR(partition.synchronize());
  }
  GCMOE_CHECK_CUDA(cudaStreamSynchronize(whole_device_.get()));
  return rank_->error();
}

}  // namespace gcmoe::kernels
