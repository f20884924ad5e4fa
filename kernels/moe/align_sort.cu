#include "engine/common/cuda_check.h"
#include "kernels/hopper/pdl_launch.h"
#include "kernels/hopper/ptx.cuh"
#include "kernels/moe/align_sort.h"

namespace gcmoe::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kItems = 4;                    // pairs per thread per sub-tile
constexpr int kSubTile = kThreads * kItems;  // pairs per block per step
constexpr int kMaxBlocks = 128;              // rows of the count histogram in the workspace
constexpr int kMaxExperts = kAlignSortMaxExperts;
constexpr int kHeaderInts = 32;  // ticket counter, padded to 128 bytes
constexpr unsigned kFullMask = 0xffffffffu;

// Workspace: [ticket | pad][per-block histogram rows, then per-block starts: kMaxBlocks x E].
struct WorkspaceView {
  int* ticket;
  int* rows;
};

__device__ inline WorkspaceView workspace_view(void* workspace) {
  int* base = static_cast<int*>(workspace);
  return {base, base + kHeaderInts};
}

struct PlaceShared {
  int cursor[kMaxExperts];               // next row of each expert for this block
  int warp_counts[kWarps][kMaxExperts];  // per-warp counts of the current sub-tile
  int offsets[kMaxExperts + 1];
  int counts[kMaxExperts];  // one-block kernel only
  int warp_sums[kWarps];
};

__device__ __forceinline__ int round_up(int value, int multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// The expert of pair `index`, or `experts` for a pair past `end` or routed elsewhere.
__device__ __forceinline__ int load_key(int const* ids, int index, int end, int experts) {
  if (index >= end) {
    return experts;
  }
  int const e = __ldg(ids + index);
  return (e >= 0 && e < experts) ? e : experts;
}

// Bits of a key in [0, experts]: the width of `experts`.
__device__ __forceinline__ int key_bits(int experts) {
  return 32 - __clz(experts);
}

// The lanes holding the same key as this lane: one ballot per key bit. (__match_any_sync costs
// grow with the number of distinct values; measured ~4 us per 1024-pair sub-tile with it.)
__device__ __forceinline__ unsigned warp_peers(int key, int bits) {
  unsigned peers = kFullMask;
  for (int b = 0; b < bits; ++b) {
    bool const bit = ((key >> b) & 1) != 0;
    unsigned const set = __ballot_sync(kFullMask, bit);
    peers &= bit ? set : ~set;
  }
  return peers;
}

// Adds the per-expert counts of ids[lo, hi) into `hist` (shared). Warp-aggregated: one atomic per
// distinct expert per warp step, so a skewed input does not serialise on one address.
__device__ void count_range(int const* ids, int lo, int hi, int experts, int* hist) {
  int const lane = static_cast<int>(threadIdx.x) & 31;
  int const bits = key_bits(experts);
  for (int base = lo; base < hi; base += kSubTile) {
    int key[kItems];
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      key[i] = load_key(ids, base + i * kThreads + static_cast<int>(threadIdx.x), hi, experts);
    }
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      unsigned const peers = warp_peers(key[i], bits);
      if (key[i] < experts && lane == __ffs(peers) - 1) {
        atomicAdd(&hist[key[i]], __popc(peers));
      }
    }
  }
}

// offsets[e] = sum over e' < e of round_up(counts[e'], block); offsets[experts] = the total.
// Ends with a barrier.
__device__ void scan_padded(int const* counts, int* offsets, int experts, int block,
                            int* warp_sums) {
  int const lane = static_cast<int>(threadIdx.x) & 31;
  int const warp = static_cast<int>(threadIdx.x) >> 5;
  int const per_thread = (experts + kThreads - 1) / kThreads;
  int const first = static_cast<int>(threadIdx.x) * per_thread;
  int const last = min(first + per_thread, experts);
  int local = 0;
  for (int e = first; e < last; ++e) {
    local += round_up(counts[e], block);
  }
  int inclusive = local;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    int const v = __shfl_up_sync(kFullMask, inclusive, d);
    if (lane >= d) {
      inclusive += v;
    }
  }
  if (lane == 31) {
    warp_sums[warp] = inclusive;
  }
  __syncthreads();
  int running = inclusive - local;
  for (int w = 0; w < warp; ++w) {
    running += warp_sums[w];
  }
  for (int e = first; e < last; ++e) {
    offsets[e] = running;
    running += round_up(counts[e], block);
  }
  if (static_cast<int>(threadIdx.x) == kThreads - 1) {
    offsets[experts] = running;
  }
  __syncthreads();
}

// Places the valid pairs of ids[base, min(base + kSubTile, hi)) at cursor[e] + (pairs of e before
// them in this sub-tile), in flat-index order, and advances the cursors. Warp w owns the
// contiguous pairs [base + w * 32 * kItems, base + (w + 1) * 32 * kItems).
__device__ void place_sub_tile(int const* ids, int base, int hi, int experts, PlaceShared& s,
                               int* sorted_ids) {
  int const lane = static_cast<int>(threadIdx.x) & 31;
  int const warp = static_cast<int>(threadIdx.x) >> 5;
  int const bits = key_bits(experts);
  unsigned const lower = (1u << lane) - 1u;
  int const warp_base = base + warp * 32 * kItems;
  int key[kItems];
  int rank[kItems];
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    key[i] = load_key(ids, warp_base + i * 32 + lane, hi, experts);
  }
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    int const e = key[i];
    unsigned const peers = warp_peers(e, bits);
    rank[i] = e < experts ? s.warp_counts[warp][e] + __popc(peers & lower) : 0;
    __syncwarp();
    if (e < experts && lane == __ffs(peers) - 1) {
      s.warp_counts[warp][e] += __popc(peers);
    }
    __syncwarp();
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    int const e = key[i];
    if (e < experts) {
      int row = s.cursor[e] + rank[i];
      for (int w = 0; w < warp; ++w) {
        row += s.warp_counts[w][e];
      }
      sorted_ids[row] = warp_base + i * 32 + lane;
    }
  }
  __syncthreads();
  // The last pair of expert e in this warp's range adds the warp's count and clears it. Another
  // lane may read the cleared 0 but never matches it (rank + 1 >= 1).
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    int const e = key[i];
    if (e < experts) {
      int const c = s.warp_counts[warp][e];
      if (rank[i] + 1 == c) {
        atomicAdd(&s.cursor[e], c);
        s.warp_counts[warp][e] = 0;
      }
    }
  }
  __syncthreads();
}

// Grid-wide: every row of sorted_ids set to the padding value n. Runs before any pair is placed
// (earlier kernel, or before a barrier), so placement overwrites the real rows.
__device__ void fill_rows(int n, int capacity, int* sorted_ids) {
  int const tid = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  int const stride = static_cast<int>(gridDim.x * blockDim.x);
  for (int row = tid; row < capacity; row += stride) {
    sorted_ids[row] = n;
  }
}

// Grid-wide: the expert of every block of rows (-1 past the total), from the offsets in shared.
__device__ void fill_block_experts(int experts, int block, int max_blocks, int const* offsets,
                                   int* block_experts) {
  int const tid = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  int const stride = static_cast<int>(gridDim.x * blockDim.x);
  int const total = offsets[experts];
  for (int b = tid; b < max_blocks; b += stride) {
    int const row = b * block;
    int owner = -1;
    if (row < total) {
      int lo = 0;  // offsets[lo] <= row < offsets[hi]
      int hi = experts;
      while (hi - lo > 1) {
        int const mid = (lo + hi) / 2;
        if (offsets[mid] <= row) {
          lo = mid;
        } else {
          hi = mid;
        }
      }
      owner = lo;
    }
    block_experts[b] = owner;
  }
}

__device__ void zero_warp_counts(PlaceShared& s, int experts) {
  for (int i = static_cast<int>(threadIdx.x); i < kWarps * experts; i += kThreads) {
    s.warp_counts[i / experts][i % experts] = 0;
  }
}

__global__ void __launch_bounds__(kThreads)
    align_sort_one_block_kernel(int const* __restrict__ ids, int n, int experts, int block,
                                int capacity, int max_blocks, AlignSortOutputs out, bool chained) {
  hopper::enter_launch_chain(chained);
  __shared__ PlaceShared s;
  for (int e = static_cast<int>(threadIdx.x); e < experts; e += kThreads) {
    s.counts[e] = 0;
  }
  zero_warp_counts(s, experts);
  fill_rows(n, capacity, out.sorted_ids);
  __syncthreads();
  count_range(ids, 0, n, experts, s.counts);
  __syncthreads();
  scan_padded(s.counts, s.offsets, experts, block, s.warp_sums);
  for (int e = static_cast<int>(threadIdx.x); e <= experts; e += kThreads) {
    out.expert_offsets[e] = s.offsets[e];
    if (e < experts) {
      s.cursor[e] = s.offsets[e];
    }
  }
  if (threadIdx.x == 0) {
    *out.total_padded = s.offsets[experts];
  }
  fill_block_experts(experts, block, max_blocks, s.offsets, out.block_experts);
  __syncthreads();
  for (int base = 0; base < n; base += kSubTile) {
    place_sub_tile(ids, base, n, experts, s, out.sorted_ids);
  }
}

// Pass 1: every row set to the padding value; per-block histogram rows; the last block scans them
// into per-block starts and the expert offsets, then resets the ticket for the next call.
__global__ void __launch_bounds__(kThreads)
    align_sort_count_kernel(int const* __restrict__ ids, int n, int experts, int block, int chunk,
                            int capacity, void* workspace, AlignSortOutputs out, bool chained) {
  hopper::enter_launch_chain(chained);
  __shared__ int hist[kMaxExperts];
  __shared__ int offsets[kMaxExperts + 1];
  __shared__ int warp_sums[kWarps];
  __shared__ bool is_last;
  WorkspaceView const ws = workspace_view(workspace);
  for (int e = static_cast<int>(threadIdx.x); e < experts; e += kThreads) {
    hist[e] = 0;
  }
  fill_rows(n, capacity, out.sorted_ids);
  __syncthreads();
  int const lo = static_cast<int>(blockIdx.x) * chunk;
  count_range(ids, lo, min(n, lo + chunk), experts, hist);
  __syncthreads();
  for (int e = static_cast<int>(threadIdx.x); e < experts; e += kThreads) {
    ws.rows[blockIdx.x * experts + e] = hist[e];
  }
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    is_last = atomicAdd(ws.ticket, 1) == static_cast<int>(gridDim.x) - 1;
  }
  __syncthreads();
  if (!is_last) {
    return;
  }
  __threadfence();
  int const blocks = static_cast<int>(gridDim.x);
  constexpr int kBatch = 32;  // loads in flight per thread
  for (int e = static_cast<int>(threadIdx.x); e < experts; e += kThreads) {
    int running = 0;
    for (int b0 = 0; b0 < blocks; b0 += kBatch) {
      int c[kBatch];
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        c[j] = b0 + j < blocks ? __ldcg(ws.rows + (b0 + j) * experts + e) : 0;
      }
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        if (b0 + j < blocks) {
          __stcg(ws.rows + (b0 + j) * experts + e, running);
          running += c[j];
        }
      }
    }
    hist[e] = running;
  }
  __syncthreads();
  scan_padded(hist, offsets, experts, block, warp_sums);
  for (int e = static_cast<int>(threadIdx.x); e <= experts; e += kThreads) {
    out.expert_offsets[e] = offsets[e];
  }
  if (threadIdx.x == 0) {
    *out.total_padded = offsets[experts];
    *ws.ticket = 0;
  }
}

// Pass 2: each block places its range from its per-expert starts; the grid writes the block
// experts.
__global__ void __launch_bounds__(kThreads)
    align_sort_place_kernel(int const* __restrict__ ids, int n, int experts, int block, int chunk,
                            int max_blocks, void const* workspace, AlignSortOutputs out,
                            bool chained) {
  hopper::enter_launch_chain(chained);
  __shared__ PlaceShared s;
  WorkspaceView const ws = workspace_view(const_cast<void*>(workspace));
  int const* starts = ws.rows + blockIdx.x * experts;
  for (int e = static_cast<int>(threadIdx.x); e <= experts; e += kThreads) {
    int const offset = out.expert_offsets[e];
    s.offsets[e] = offset;
    if (e < experts) {
      s.cursor[e] = offset + starts[e];
    }
  }
  zero_warp_counts(s, experts);
  __syncthreads();
  fill_block_experts(experts, block, max_blocks, s.offsets, out.block_experts);
  int const lo = static_cast<int>(blockIdx.x) * chunk;
  int const hi = min(n, lo + chunk);
  for (int base = lo; base < hi; base += kSubTile) {
    place_sub_tile(ids, base, hi, experts, s, out.sorted_ids);
  }
}

}  // namespace

std::size_t align_sort_workspace_bytes(std::int32_t num_experts) {
  std::size_t const e = num_experts > 0 ? static_cast<std::size_t>(num_experts) : 0;
  return (kHeaderInts + static_cast<std::size_t>(kMaxBlocks) * e) * sizeof(int);
}

Status align_sort_init_workspace(void* workspace, std::size_t bytes, cudaStream_t stream) {
  GCMOE_CHECK_ARG_MSG(workspace != nullptr && bytes >= kHeaderInts * sizeof(int),
                      "align & sort: workspace too small to initialise");
  GCMOE_CHECK_CUDA(cudaMemsetAsync(workspace, 0, bytes, stream));
  return Status();
}

Status align_sort(std::int32_t const* topk_ids, AlignSortShape const& shape,
                  AlignSortOutputs const& out, void* workspace, std::size_t workspace_bytes,
                  cudaStream_t stream, AlignSortPath path, bool chained) {
  GCMOE_RETURN_IF_ERROR(validate_align_sort_shape(shape));
  auto const n = static_cast<int>(shape.num_pairs());
  auto const capacity = static_cast<int>(shape.capacity());
  auto const max_blocks = static_cast<int>(shape.max_blocks());
  GCMOE_CHECK_ARG_MSG((capacity == 0 || out.sorted_ids != nullptr) &&
                          (max_blocks == 0 || out.block_experts != nullptr) &&
                          out.expert_offsets != nullptr && out.total_padded != nullptr,
                      "align & sort: null output pointer");
  GCMOE_CHECK_ARG_MSG(n == 0 || topk_ids != nullptr, "align & sort: null topk_ids");
  bool const one_block = path == AlignSortPath::kOneBlock ||
                         (path == AlignSortPath::kAuto && n <= kAlignSortOneBlockMaxPairs);
  if (one_block) {
    GCMOE_CHECK_CUDA(hopper::launch_with_pdl(align_sort_one_block_kernel, dim3(1), dim3(kThreads),
                                             0, stream, chained, topk_ids, n, shape.num_experts,
                                             shape.block_size, capacity, max_blocks, out, chained));
    return Status();
  }
  GCMOE_CHECK_ARG_MSG(
      workspace != nullptr && workspace_bytes >= align_sort_workspace_bytes(shape.num_experts),
      "align & sort: workspace smaller than align_sort_workspace_bytes(num_experts)");
  int blocks = (n + kSubTile - 1) / kSubTile;
  blocks = blocks < 1 ? 1 : (blocks > kMaxBlocks ? kMaxBlocks : blocks);
  int chunk = (n + blocks - 1) / blocks;
  chunk = chunk < kSubTile ? kSubTile : (chunk + kSubTile - 1) / kSubTile * kSubTile;
  blocks = n > 0 ? (n + chunk - 1) / chunk : 1;
  GCMOE_CHECK_CUDA(hopper::launch_with_pdl(
      align_sort_count_kernel, dim3(blocks), dim3(kThreads), 0, stream, chained, topk_ids, n,
      shape.num_experts, shape.block_size, chunk, capacity, workspace, out, chained));
  GCMOE_CHECK_CUDA(hopper::launch_with_pdl(align_sort_place_kernel, dim3(blocks), dim3(kThreads), 0,
                                           stream, chained, topk_ids, n, shape.num_experts,
                                           shape.block_size, chunk, max_blocks,
                                           static_cast<void const*>(workspace), out, chained));
  return Status();
}

}  // namespace gcmoe::kernels
