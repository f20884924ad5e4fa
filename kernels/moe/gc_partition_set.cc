#include "kernels/moe/gc_partition_set.h"

#include <utility>

#include "engine/common/cuda_check.h"

namespace gcmoe::kernels {

StatusOr<GcPartitionSet> GcPartitionSet::create(int device, GcPartitionPlan const& plan) {
  GcPartitionSet set;
  set.plan_ = plan;
  for (int const sms : set.plan_.comm_sizes()) {
    GCMOE_ASSIGN_OR_RETURN(auto partition, cuda::SmPartition::create(device, sms));
    set.partitions_.emplace(sms, std::move(partition));
  }
  GCMOE_ASSIGN_OR_RETURN(set.whole_device_, cuda::Stream::create());
  GCMOE_CHECK_CUDA(
      cudaDeviceGetAttribute(&set.device_sms_, cudaDevAttrMultiProcessorCount, device));
  GCMOE_ASSIGN_OR_RETURN(set.switch_, cuda::Event::create());
  set.last_stream_ =
      set.partitions_.empty()
          ? set.whole_device_.get()
          : reinterpret_cast<cudaStream_t>(set.partitions_.begin()->second.compute().stream());
  return set;
}

cuda::SmPartition const* GcPartitionSet::partition_of(int num_tokens) const {
  auto const it = partitions_.find(plan_.comm_sms(num_tokens));
  return it == partitions_.end() ? nullptr : &it->second;
}

int GcPartitionSet::comm_sms(int num_tokens) const {
  cuda::SmPartition const* const p = partition_of(num_tokens);
  return p == nullptr ? 0 : p->comm().sm_count();
}

int GcPartitionSet::compute_sms(int num_tokens) const {
  cuda::SmPartition const* const p = partition_of(num_tokens);
  return p == nullptr ? device_sms_ : p->compute().sm_count();
}

Status GcPartitionSet::launch_ordered(cuda::Graph const& graph, cudaStream_t stream) {
  if (stream != last_stream_) {
    GCMOE_RETURN_IF_ERROR(cuda::order_after(switch_.get(), last_stream_, stream));
    last_stream_ = stream;
  }
  return graph.launch(stream);
}

}  // namespace gcmoe::kernels
