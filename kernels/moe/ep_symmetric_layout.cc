#include "kernels/moe/ep_symmetric_layout.h"

#include <algorithm>

namespace gcmoe::kernels {
namespace {

// Appends a buffer of `bytes` (at least one alignment unit, so no two buffers share an address)
// and returns its offset.
std::size_t place(std::size_t& end, std::int64_t bytes) {
  std::size_t const offset = end;
  std::size_t const size = static_cast<std::size_t>(std::max<std::int64_t>(bytes, 1));
  end += (size + kEpSymmetricAlignment - 1) / kEpSymmetricAlignment * kEpSymmetricAlignment;
  return offset;
}

}  // namespace

std::int64_t ep_receive_capacity(MoeLayerConfig const& config, int max_tokens, int ranks) {
  std::int64_t const local_experts = config.num_experts / ranks;
  return std::min<std::int64_t>(std::int64_t{ranks} * max_tokens * config.top_k,
                                local_experts * ranks * max_tokens) +
         max_tokens;
}

EpSymmetricLayout ep_symmetric_layout(MoeLayerConfig const& config, int max_tokens, int ranks) {
  EpSymmetricLayout layout;
  std::int64_t const capacity = ep_receive_capacity(config, max_tokens, ranks);
  std::int64_t const h = config.hidden;
  layout.capacity = capacity;
  std::size_t end = 0;
  for (int p = 0; p < 2; ++p) {
    layout.recv_xq[p] = place(end, capacity * h);
    layout.recv_scales[p] = place(end, capacity * (h / 128) * 4);
    layout.recv_weights[p] = place(end, capacity * 4);
    layout.row_flags[p] = place(end, capacity * 4);
    layout.counts[p] = place(end, std::int64_t{ranks} * config.num_experts * 4);
    layout.count_flags[p] = place(end, std::int64_t{ranks} * 4);
  }
  layout.done_flags = place(end, std::int64_t{ranks} * 4);
  layout.barrier_flags = place(end, std::int64_t{ranks} * 4);
  layout.y = place(end, capacity * h * 2);
  layout.bytes = end;
  return layout;
}

std::int64_t ep_rank_device_bytes(MoeLayerConfig const& config, int max_tokens, int ranks) {
  EpSymmetricLayout const layout = ep_symmetric_layout(config, max_tokens, ranks);
  std::int64_t const inter = config.intermediate;
  return static_cast<std::int64_t>(layout.bytes) + layout.capacity * inter +
         layout.capacity * (inter / 128) * 4;
}

}  // namespace gcmoe::kernels
