// The simple baseline of MoE align & sort (kernels/moe/align_sort.h): one block, one launch.
// Counts with shared atomics, one thread does the padded prefix sum (as SGLang's first
// moe_align_block_size kernel), warp 0 places the pairs 32 at a time in flat-index order while the
// other warps write the padding rows and the block experts.
#include "engine/common/cuda_check.h"
#include "kernels/moe/align_sort.h"

namespace gcmoe::kernels {
namespace {

constexpr int kThreads = 1024;
constexpr unsigned kFullMask = 0xffffffffu;

__global__ void __launch_bounds__(kThreads)
    align_sort_single_block_kernel(int const* __restrict__ ids, int n, int experts, int block,
                                   int capacity, int max_blocks, AlignSortOutputs out) {
  __shared__ int counts[kAlignSortMaxExperts];
  __shared__ int offsets[kAlignSortMaxExperts + 1];
  __shared__ int cursor[kAlignSortMaxExperts];
  int const tid = static_cast<int>(threadIdx.x);
  int const lane = tid & 31;
  int const warp = tid >> 5;
  for (int e = tid; e < experts; e += kThreads) {
    counts[e] = 0;
  }
  __syncthreads();
  for (int i = tid; i < n; i += kThreads) {
    int const e = ids[i];
    if (e >= 0 && e < experts) {
      atomicAdd(&counts[e], 1);
    }
  }
  __syncthreads();
  if (tid == 0) {
    offsets[0] = 0;
    for (int e = 0; e < experts; ++e) {
      offsets[e + 1] = offsets[e] + (counts[e] + block - 1) / block * block;
    }
    *out.total_padded = offsets[experts];
  }
  __syncthreads();
  for (int e = tid; e <= experts; e += kThreads) {
    out.expert_offsets[e] = offsets[e];
    if (e < experts) {
      cursor[e] = offsets[e];
    }
  }
  __syncthreads();
  int const total = offsets[experts];
  if (warp == 0) {
    unsigned const lower = (1u << lane) - 1u;
    for (int base = 0; base < n; base += 32) {
      int const i = base + lane;
      int e = i < n ? ids[i] : -1;
      e = (e >= 0 && e < experts) ? e : -1;
      unsigned const peers = __match_any_sync(kFullMask, e);
      if (e >= 0) {
        out.sorted_ids[cursor[e] + __popc(peers & lower)] = i;
      }
      __syncwarp();
      if (e >= 0 && lane == __ffs(peers) - 1) {
        cursor[e] += __popc(peers);
      }
      __syncwarp();
    }
    return;
  }
  // Warps 1..31: padding rows of each expert, the rows past the total, the block experts.
  int const helpers = kThreads - 32;
  int const helper = tid - 32;
  for (int e = warp - 1; e < experts; e += kThreads / 32 - 1) {
    for (int row = offsets[e] + counts[e] + lane; row < offsets[e + 1]; row += 32) {
      out.sorted_ids[row] = n;
    }
    for (int row = offsets[e] + lane * block; row < offsets[e + 1]; row += 32 * block) {
      out.block_experts[row / block] = e;
    }
  }
  for (int row = total + helper; row < capacity; row += helpers) {
    out.sorted_ids[row] = n;
  }
  for (int b = total / block + helper; b < max_blocks; b += helpers) {
    out.block_experts[b] = -1;
  }
}

}  // namespace

Status align_sort_single_block(std::int32_t const* topk_ids, AlignSortShape const& shape,
                               AlignSortOutputs const& out, cudaStream_t stream) {
  GCMOE_RETURN_IF_ERROR(validate_align_sort_shape(shape));
  GCMOE_CHECK_ARG_MSG((shape.capacity() == 0 || out.sorted_ids != nullptr) &&
                          (shape.max_blocks() == 0 || out.block_experts != nullptr) &&
                          out.expert_offsets != nullptr && out.total_padded != nullptr,
                      "align & sort (single block): null output pointer");
  auto const n = static_cast<int>(shape.num_pairs());
  GCMOE_CHECK_ARG_MSG(n == 0 || topk_ids != nullptr, "align & sort (single block): null ids");
  align_sort_single_block_kernel<<<1, kThreads, 0, stream>>>(
      topk_ids, n, shape.num_experts, shape.block_size, static_cast<int>(shape.capacity()),
      static_cast<int>(shape.max_blocks()), out);
  GCMOE_CHECK_LAUNCH();
  return Status();
}

}  // namespace gcmoe::kernels
