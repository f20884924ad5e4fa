#include "kernels/moe/align_sort_shape.h"

#include <algorithm>
#include <limits>

#include "engine/common/check.h"

namespace gcmoe::kernels {

std::int64_t AlignSortShape::capacity() const {
  std::int64_t const n = num_pairs();
  std::int64_t const b = block_size;
  std::int64_t const rows = n + std::min<std::int64_t>(num_experts, n) * (b - 1);
  return (rows + b - 1) / b * b;
}

std::int64_t AlignSortShape::max_blocks() const {
  return capacity() / block_size;
}

Status validate_align_sort_shape(AlignSortShape const& shape) {
  GCMOE_CHECK_ARG(shape.num_tokens >= 0, "align & sort: negative token count {}", shape.num_tokens);
  GCMOE_CHECK_ARG(shape.top_k >= 1, "align & sort: top_k {} must be at least 1", shape.top_k);
  GCMOE_CHECK_ARG(shape.num_experts >= 1 && shape.num_experts <= kAlignSortMaxExperts,
                  "align & sort: {} experts, supported 1..{}", shape.num_experts,
                  kAlignSortMaxExperts);
  GCMOE_CHECK_ARG(shape.block_size >= 1 && shape.block_size <= kAlignSortMaxBlockSize,
                  "align & sort: block size {}, supported 1..{}", shape.block_size,
                  kAlignSortMaxBlockSize);
  GCMOE_CHECK_ARG(shape.capacity() < std::numeric_limits<std::int32_t>::max(),
                  "align & sort: {} tokens x top-{} needs {} rows, over the int32 range",
                  shape.num_tokens, shape.top_k, shape.capacity());
  return Status();
}

}  // namespace gcmoe::kernels
