#include "kernels/moe/align_sort_buffers.h"

#include <vector>

namespace gcmoe::kernels {

StatusOr<AlignSortBuffers> AlignSortBuffers::allocate(AlignSortShape const& shape) {
  AlignSortBuffers out;
  GCMOE_ASSIGN_OR_RETURN(out.sorted_, cuda::DeviceBuffer<std::int32_t>::allocate(
                                          static_cast<std::size_t>(shape.capacity())));
  GCMOE_ASSIGN_OR_RETURN(out.blocks_, cuda::DeviceBuffer<std::int32_t>::allocate(
                                          static_cast<std::size_t>(shape.max_blocks())));
  GCMOE_ASSIGN_OR_RETURN(out.offsets_, cuda::DeviceBuffer<std::int32_t>::allocate(
                                           static_cast<std::size_t>(shape.num_experts) + 1));
  GCMOE_ASSIGN_OR_RETURN(out.total_, cuda::DeviceBuffer<std::int32_t>::allocate(1));
  return out;
}

Status AlignSortBuffers::poison() {
  for (cuda::DeviceBuffer<std::int32_t>* b : {&sorted_, &blocks_, &offsets_, &total_}) {
    if (b->size() > 0) {
      GCMOE_RETURN_IF_ERROR(b->fill_bytes(0x7f));
    }
  }
  return Status();
}

StatusOr<AlignSortResult> AlignSortBuffers::read_back() const {
  GCMOE_CHECK_CUDA(cudaDeviceSynchronize());
  AlignSortResult r;
  r.sorted_ids.resize(sorted_.size());
  r.block_experts.resize(blocks_.size());
  r.expert_offsets.resize(offsets_.size());
  std::vector<std::int32_t> total(1);
  GCMOE_RETURN_IF_ERROR(sorted_.copy_to_host(r.sorted_ids));
  GCMOE_RETURN_IF_ERROR(blocks_.copy_to_host(r.block_experts));
  GCMOE_RETURN_IF_ERROR(offsets_.copy_to_host(r.expert_offsets));
  GCMOE_RETURN_IF_ERROR(total_.copy_to_host(total));
  r.total_padded = total[0];
  return r;
}

}  // namespace gcmoe::kernels
