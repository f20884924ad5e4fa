#pragma once
// MoE align & sort on the GPU: routed pairs grouped by expert, each expert's segment padded to the
// grouped GEMM's block size. Output layout, ordering and sizes: kernels/moe/align_sort_shape.h
// (stable: ascending flat index inside each expert, so results are deterministic and equal to the
// CPU reference bit for bit).
//
// Multi-block algorithm (after the "MoE Align & Sort" article, made stable and graph-capturable):
//   1. count: the grid sets every row of sorted_ids to the padding value; G blocks each count a
//      contiguous range of pairs per expert (warp-aggregated shared atomics) and store their
//      histogram row; the last block to finish (ticket counter) scans the G x E histogram per
//      expert into per-block starts, pads the totals to the block size and scans them into the
//      expert offsets, then resets the ticket.
//   2. place: the same G blocks re-read their ranges in 1024-pair sub-tiles, rank each pair inside
//      its warp (lanes with the same expert found by one ballot per expert-id bit), add the counts
//      of lower warps and the block's start, and write it; the grid also writes the expert of
//      every block of rows.
// Small inputs take a one-block fused kernel (one launch). No host synchronization, no allocation:
// every launch is capturable in a CUDA graph, for a fixed shape.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "engine/common/status.h"
#include "kernels/moe/align_sort_shape.h"

namespace gcmoe::kernels {

// Device pointers of the outputs; sizes from AlignSortShape (capacity, max_blocks, experts + 1).
struct AlignSortOutputs {
  std::int32_t* sorted_ids = nullptr;
  std::int32_t* block_experts = nullptr;
  std::int32_t* expert_offsets = nullptr;
  std::int32_t* total_padded = nullptr;
};

enum class AlignSortPath {
  kAuto,        // one block up to kAlignSortOneBlockMaxPairs pairs, multi-block above
  kOneBlock,    // the fused one-block kernel at any size
  kMultiBlock,  // count + place over G blocks at any size (G = 1 for small inputs)
};

inline constexpr std::int64_t kAlignSortOneBlockMaxPairs = 2048;

// Bytes of device workspace for up to `num_experts` experts, any token count.
std::size_t align_sort_workspace_bytes(std::int32_t num_experts);

// Zeroes a workspace once, before its first use; every align_sort call leaves it reusable.
Status align_sort_init_workspace(void* workspace, std::size_t bytes, cudaStream_t stream);

// Asynchronous on `stream`. `topk_ids`: device int32 [num_tokens, top_k]. `workspace`: at least
// align_sort_workspace_bytes(shape.num_experts) bytes, initialised once; one call at a time per
// workspace. chained: every launch in a launch chain (hopper::enter_launch_chain).
Status align_sort(std::int32_t const* topk_ids, AlignSortShape const& shape,
                  AlignSortOutputs const& out, void* workspace, std::size_t workspace_bytes,
                  cudaStream_t stream, AlignSortPath path = AlignSortPath::kAuto,
                  bool chained = false);

// The simple baseline: one block of 1024 threads, serial prefix by one thread and placement by one
// warp walking the pairs 32 at a time. Same contract, no workspace.
Status align_sort_single_block(std::int32_t const* topk_ids, AlignSortShape const& shape,
                               AlignSortOutputs const& out, cudaStream_t stream);

}  // namespace gcmoe::kernels
