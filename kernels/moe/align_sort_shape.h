#pragma once
// The contract shared by every MoE align & sort implementation (CPU reference, single-block and
// multi-block CUDA): shapes, output sizes and the exact output layout.
//
// Input: `topk_ids`, int32 [num_tokens, top_k] row-major: the expert of each routed pair. The flat
// index of pair (t, j) is `t * top_k + j`; N = num_tokens * top_k pairs in all. An id outside
// [0, num_experts) is not routed here (expert parallelism: another rank owns it) and appears in no
// output.
//
// Outputs (every element of every array below is written by every implementation):
// - `expert_offsets`, int32 [num_experts + 1]: expert e owns rows [offsets[e], offsets[e+1]) of
//   the sorted layout; its segment length is count_e rounded up to a multiple of block_size
//   (0 for an empty expert). offsets[0] = 0, offsets[num_experts] = total_padded.
// - `sorted_ids`, int32 [capacity]: in expert e's segment, first the flat indices of the pairs
//   routed to e in ascending flat-index order (stable: token-major, then top-k slot), then
//   (segment length - count_e) padding entries equal to N. Every entry from total_padded to
//   capacity is N as well.
// - `block_experts`, int32 [max_blocks]: the expert owning rows [b * block_size, (b+1) *
//   block_size) for b < total_padded / block_size, and -1 for every later block.
// - `total_padded`, int32 [1]: the sum of the padded segment lengths.
// capacity = round_up(N + min(num_experts, N) * (block_size - 1), block_size) bounds total_padded
// for any input; max_blocks = capacity / block_size.

#include <cstdint>

#include "engine/common/status.h"

namespace gcmoe::kernels {

inline constexpr std::int32_t kAlignSortMaxExperts = 1024;
inline constexpr std::int32_t kAlignSortMaxBlockSize = 1024;

struct AlignSortShape {
  std::int32_t num_tokens = 0;
  std::int32_t top_k = 0;
  std::int32_t num_experts = 0;
  std::int32_t block_size = 0;

  std::int64_t num_pairs() const { return std::int64_t{num_tokens} * top_k; }
  // Rows of `sorted_ids`: an upper bound of total_padded over every possible input.
  std::int64_t capacity() const;
  // Entries of `block_experts`: capacity / block_size.
  std::int64_t max_blocks() const;
};

// num_tokens >= 0, top_k >= 1, 1 <= num_experts <= 1024, 1 <= block_size <= 1024, and capacity
// below 2^31 (int32 indices on the GPU).
Status validate_align_sort_shape(AlignSortShape const& shape);

}  // namespace gcmoe::kernels
