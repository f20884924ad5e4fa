#include "bench/common/expert_batch.h"

#include <algorithm>
#include <vector>

#include "bench/common/device_fill.h"
#include "bench/common/expert_routing.h"

namespace gcmoe::bench {

using cuda::DeviceBuffer;

StatusOr<ExpertBatch> make_expert_batch(ExpertBatchShape const& shape, std::uint64_t seed,
                                        cudaStream_t stream) {
  ExpertRouting const routing =
      random_expert_routing(shape.global_tokens, shape.local, shape.experts, shape.top_k, seed);
  std::vector<int> const& offsets = routing.offsets;
  std::vector<int> const& active = routing.active;
  ExpertBatch b;
  b.rows = routing.rows;
  b.active = static_cast<int>(active.size());
  b.max_rows_per_expert = routing.max_rows_per_expert;
  std::size_t const rows = std::max(b.rows, 1);
  GCMOE_ASSIGN_OR_RETURN(b.x, DeviceBuffer<std::uint8_t>::allocate(rows * shape.hidden));
  GCMOE_ASSIGN_OR_RETURN(b.x_scales, DeviceBuffer<float>::allocate(rows * (shape.hidden / 128)));
  GCMOE_ASSIGN_OR_RETURN(b.h, DeviceBuffer<std::uint8_t>::allocate(rows * shape.inter));
  GCMOE_ASSIGN_OR_RETURN(b.h_scales, DeviceBuffer<float>::allocate(rows * (shape.inter / 128)));
  GCMOE_ASSIGN_OR_RETURN(b.y, DeviceBuffer<std::uint16_t>::allocate(rows * shape.hidden));
  GCMOE_ASSIGN_OR_RETURN(b.offsets, DeviceBuffer<int>::allocate(offsets.size()));
  GCMOE_ASSIGN_OR_RETURN(b.active_experts,
                         DeviceBuffer<int>::allocate(std::max<std::size_t>(active.size(), 1)));
  GCMOE_ASSIGN_OR_RETURN(b.num_active, DeviceBuffer<int>::allocate(1));
  GCMOE_RETURN_IF_ERROR(b.offsets.copy_from_host(offsets));
  if (!active.empty()) {
    GCMOE_RETURN_IF_ERROR(b.active_experts.copy_from_host(active));
  }
  std::vector<int> const n = {b.active};
  GCMOE_RETURN_IF_ERROR(b.num_active.copy_from_host(n));
  GCMOE_RETURN_IF_ERROR(
      fill_random_e4m3(b.x.data(), static_cast<std::int64_t>(b.x.size()), seed, stream));
  GCMOE_RETURN_IF_ERROR(fill_random_floats(b.x_scales.data(),
                                           static_cast<std::int64_t>(b.x_scales.size()), 2e-3f,
                                           6e-3f, seed + 1, stream));
  return b;
}

}  // namespace gcmoe::bench
