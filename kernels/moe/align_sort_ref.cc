#include "kernels/moe/align_sort_ref.h"

#include <algorithm>

#include "engine/common/check.h"

namespace gcmoe::kernels {

StatusOr<AlignSortResult> align_sort_ref(std::span<std::int32_t const> topk_ids,
                                         AlignSortShape const& shape) {
  GCMOE_RETURN_IF_ERROR(validate_align_sort_shape(shape));
  std::int64_t const n = shape.num_pairs();
  GCMOE_CHECK_ARG(static_cast<std::int64_t>(topk_ids.size()) == n,
                  "align & sort reference: {} ids for {} pairs", topk_ids.size(), n);
  std::int32_t const experts = shape.num_experts;
  std::int32_t const block = shape.block_size;
  auto const sentinel = static_cast<std::int32_t>(n);

  std::vector<std::int32_t> counts(static_cast<std::size_t>(experts), 0);
  for (std::int32_t const e : topk_ids) {
    if (e >= 0 && e < experts) {
      ++counts[static_cast<std::size_t>(e)];
    }
  }
  AlignSortResult out;
  out.expert_offsets.assign(static_cast<std::size_t>(experts) + 1, 0);
  for (std::int32_t e = 0; e < experts; ++e) {
    std::int32_t const c = counts[static_cast<std::size_t>(e)];
    std::int32_t const padded = (c + block - 1) / block * block;
    out.expert_offsets[static_cast<std::size_t>(e) + 1] =
        out.expert_offsets[static_cast<std::size_t>(e)] + padded;
  }
  out.total_padded = out.expert_offsets.back();

  out.sorted_ids.assign(static_cast<std::size_t>(shape.capacity()), sentinel);
  std::vector<std::int32_t> cursor(out.expert_offsets.begin(), out.expert_offsets.end() - 1);
  for (std::int64_t i = 0; i < n; ++i) {
    std::int32_t const e = topk_ids[static_cast<std::size_t>(i)];
    if (e >= 0 && e < experts) {
      out.sorted_ids[static_cast<std::size_t>(cursor[static_cast<std::size_t>(e)]++)] =
          static_cast<std::int32_t>(i);
    }
  }

  out.block_experts.assign(static_cast<std::size_t>(shape.max_blocks()), -1);
  for (std::int32_t e = 0; e < experts; ++e) {
    for (std::int32_t row = out.expert_offsets[static_cast<std::size_t>(e)];
         row < out.expert_offsets[static_cast<std::size_t>(e) + 1]; row += block) {
      out.block_experts[static_cast<std::size_t>(row / block)] = e;
    }
  }
  return out;
}

namespace {
std::size_t count_vector_mismatches(std::vector<std::int32_t> const& a,
                                    std::vector<std::int32_t> const& b) {
  std::size_t m = a.size() > b.size() ? a.size() - b.size() : b.size() - a.size();
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    m += a[i] != b[i] ? 1 : 0;
  }
  return m;
}
}  // namespace

std::size_t count_mismatches(AlignSortResult const& got, AlignSortResult const& want) {
  return count_vector_mismatches(got.sorted_ids, want.sorted_ids) +
         count_vector_mismatches(got.block_experts, want.block_experts) +
         count_vector_mismatches(got.expert_offsets, want.expert_offsets) +
         (got.total_padded != want.total_padded ? 1 : 0);
}

}  // namespace gcmoe::kernels
