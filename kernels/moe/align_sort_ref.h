#pragma once
// CPU reference of MoE align & sort: the contract of kernels/moe/align_sort_shape.h, computed by
// a plain counting sort.

#include <cstdint>
#include <span>
#include <vector>

#include "engine/common/status.h"
#include "kernels/moe/align_sort_shape.h"

namespace gcmoe::kernels {

struct AlignSortResult {
  std::vector<std::int32_t> sorted_ids;      // [capacity]
  std::vector<std::int32_t> block_experts;   // [max_blocks]
  std::vector<std::int32_t> expert_offsets;  // [num_experts + 1]
  std::int32_t total_padded = 0;
};

// Elements that differ between two results over all four outputs (a length difference counts
// every missing element): 0 means the GPU result equals the reference exactly.
std::size_t count_mismatches(AlignSortResult const& got, AlignSortResult const& want);

// `topk_ids` holds shape.num_pairs() expert ids.
StatusOr<AlignSortResult> align_sort_ref(std::span<std::int32_t const> topk_ids,
                                         AlignSortShape const& shape);

}  // namespace gcmoe::kernels
