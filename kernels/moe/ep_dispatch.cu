#include <cuda_bf16.h>

#include "engine/common/cuda_check.h"
#include "kernels/hopper/ptx.cuh"
#include "kernels/moe/bf16_row_sum.cuh"
#include "kernels/moe/ep_dispatch.h"
#include "kernels/moe/fp8_row_quantize.cuh"
#include "kernels/moe/wait_sites.h"

namespace gcmoe::kernels {
namespace {

constexpr int kGroup = 128;
constexpr int kPlanThreads = 256;
constexpr int kCombineThreads = 64;  // 8 hidden values each

// Raises the site's error bit; the first timeout of the rank also leaves its detail.
__device__ void record_timeout(EpStep const& s, unsigned site, int peer, int target, int seen) {
  atomicOr(s.error, site);
  EpWaitDetail* const d = s.first_timeout;
  if (d != nullptr && atomicCAS(&d->site, 0, static_cast<int>(site)) == 0) {
    d->peer = peer;
    d->parity = s.parity;
    d->target = target;
    d->seen = seen;
  }
}

__device__ bool wait_or_flag(EpStep const& s, int const* flag, int target, unsigned site,
                             int peer) {
  int seen = 0;
  if (!hopper::spin_until_at_least(flag, target, s.timeout_ns, s.system_scope, &seen)) {
    record_timeout(s, site, peer, target, seen);
    return false;
  }
  return true;
}

__global__ void __launch_bounds__(kPlanThreads)
    ep_publish_counts_kernel(EpStep s, int const* offsets, int const* wait_layout) {
  if (threadIdx.x == 0 && wait_layout != nullptr) {
    wait_or_flag(s, wait_layout, *s.epoch, kWaitLayout, -1);
  }
  __syncthreads();
  int const experts = s.num_experts;
  for (int e = static_cast<int>(threadIdx.x); e < experts; e += blockDim.x) {
    int const c = offsets != nullptr ? offsets[e + 1] - offsets[e] : 0;
    for (int d = 0; d < s.peers.ranks; ++d) {
      s.peers.rank[d].counts[s.parity][s.rank * experts + e] = c;
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    int const epoch = *s.epoch;
    for (int d = 0; d < s.peers.ranks; ++d) {
      hopper::publish(s.peers.rank[d].count_flags[s.parity] + s.rank, epoch, s.system_scope);
    }
  }
}

// Dynamic shared memory: counts [R, E], then totals [E].
__global__ void __launch_bounds__(kPlanThreads) ep_plan_kernel(EpStep s, EpPlanOutputs o) {
  extern __shared__ int plan_smem[];
  int const ranks = s.peers.ranks;
  int const experts = s.num_experts;
  int const local = experts / ranks;
  EpRankBuffers const& mine = s.peers.rank[s.rank];
  __shared__ int timed_out;
  if (threadIdx.x == 0) {
    timed_out = 0;
  }
  __syncthreads();
  if (static_cast<int>(threadIdx.x) < ranks &&
      !wait_or_flag(s, mine.count_flags[s.parity] + threadIdx.x, *s.epoch, kWaitCounts,
                    static_cast<int>(threadIdx.x))) {
    timed_out = 1;
  }
  __syncthreads();
  int* const counts = plan_smem;
  int* const total = plan_smem + ranks * experts;
  // After a timeout the layout is empty (zero counts): the step ends in an error with every
  // index in bounds, instead of trusting a half-written matrix.
  for (int i = static_cast<int>(threadIdx.x); i < ranks * experts; i += blockDim.x) {
    counts[i] = timed_out != 0 ? 0 : __ldcg(mine.counts[s.parity] + i);
  }
  __syncthreads();
  for (int e = static_cast<int>(threadIdx.x); e < experts; e += blockDim.x) {
    int sum = 0;
    for (int r = 0; r < ranks; ++r) {
      sum += counts[r * experts + e];
    }
    total[e] = sum;
  }
  __syncthreads();
  if (o.send_base != nullptr) {
    for (int e = static_cast<int>(threadIdx.x); e < experts; e += blockDim.x) {
      int base = 0;
      for (int f = e / local * local; f < e; ++f) {
        base += total[f];
      }
      for (int r = 0; r < s.rank; ++r) {
        base += counts[r * experts + e];
      }
      o.send_base[e] = base;
    }
  }
  if (o.recv_offsets != nullptr && threadIdx.x == 0) {
    int offset = 0;
    int active = 0;
    o.recv_offsets[0] = 0;
    for (int l = 0; l < local; ++l) {
      int const rows = total[s.rank * local + l];
      offset += rows;
      o.recv_offsets[l + 1] = offset;
      if (rows > 0) {
        o.active[active++] = l;
      }
    }
    if (o.shared_rows >= 0) {
      o.recv_offsets[local + 1] = offset + o.shared_rows;
      if (o.shared_rows > 0) {
        o.active[active++] = local;
      }
    }
    *o.num_active = active;
  }
}

// One block stores one row into rank `to`'s receive buffer of this step's parity: its routing
// weight (thread 0), the FP8 row and its scales (every warp), then — once every warp has stored
// its groups — the row's epoch flag, released at `system` scope.
__device__ void store_received_row(EpStep const& s, EpRankBuffers const& to, int dest,
                                   float const* row, float weight, RequantScale recipe,
                                   bool system) {
  if (threadIdx.x == 0) {
    to.recv_weights[s.parity][dest] = weight;
  }
  std::int64_t const groups = s.hidden / kGroup;
  quantize_row_fp8(row, s.hidden, recipe,
                   to.recv_xq[s.parity] + static_cast<std::int64_t>(dest) * s.hidden,
                   to.recv_scales[s.parity] + dest * groups);
  __syncthreads();
  if (threadIdx.x == 0) {
    hopper::publish(to.row_flags[s.parity] + dest, *s.epoch, system);
  }
}

__global__ void __launch_bounds__(kRowQuantWarps * 32)
    ep_dispatch_rows_kernel(EpStep s, EpDispatchRows a) {
  int const p = static_cast<int>(blockIdx.x);
  int const pair = a.sorted_ids[p];
  int const token = pair / a.top_k;
  int const expert = a.topk_ids[pair];
  int const local = s.num_experts / s.peers.ranks;
  int const owner = expert / local;
  int const dest = a.send_base[expert] + (p - a.expert_offsets[expert]);
  if (threadIdx.x == 0) {
    a.pair_rank[pair] = owner;
    a.pair_row[pair] = dest;
  }
  store_received_row(s, s.peers.rank[owner], dest,
                     a.x + static_cast<std::int64_t>(token) * s.hidden, a.topk_weights[pair],
                     a.recipe, s.system_scope);
}

// Block per own token: row recv_offsets[local] + t of this rank's own receive buffer.
__global__ void __launch_bounds__(kRowQuantWarps * 32)
    ep_dispatch_shared_rows_kernel(EpStep s, float const* x, RequantScale recipe,
                                   int const* recv_offsets) {
  int const t = static_cast<int>(blockIdx.x);
  int const dest = recv_offsets[s.num_experts / s.peers.ranks] + t;
  // Its own buffer: gpu scope suffices.
  store_received_row(s, s.peers.rank[s.rank], dest, x + static_cast<std::int64_t>(t) * s.hidden,
                     1.0f, recipe, false);
}

__global__ void ep_signal_done_kernel(EpStep s) {
  int const d = static_cast<int>(threadIdx.x);
  if (d < s.peers.ranks) {
    hopper::publish(s.peers.rank[d].done_flags + s.rank, *s.epoch, s.system_scope);
  }
}

// Block (token, y): waits for every owner's done flag, then as local_combine (8 values per
// thread, 16-byte loads, slot order, shared expert last, one bf16 rounding).
__global__ void __launch_bounds__(kCombineThreads) ep_combine_kernel(EpStep s, EpCombine a) {
  if (static_cast<int>(threadIdx.x) < s.peers.ranks) {
    wait_or_flag(s, s.peers.rank[s.rank].done_flags + threadIdx.x, *s.epoch, kWaitDone,
                 static_cast<int>(threadIdx.x));
  }
  __syncthreads();
  int const t = static_cast<int>(blockIdx.x);
  if (blockIdx.y == 0) {
    // After this rank's L2 (stream order): its last reader of the counters.
    zero_token_share(a.clear, a.clear_rows, t, a.num_tokens);
  }
  int const h0 =
      (static_cast<int>(blockIdx.y) * kCombineThreads + static_cast<int>(threadIdx.x)) * 8;
  if (h0 >= s.hidden) {
    return;
  }
  auto const row_of = [&](int pair) {
    return s.peers.rank[a.pair_rank[pair]].y +
           static_cast<std::int64_t>(a.pair_row[pair]) * s.hidden;
  };
  std::uint16_t const* shared_y = a.shared_y;
  if (a.shared_first_row != nullptr) {
    shared_y = s.peers.rank[s.rank].y + static_cast<std::int64_t>(*a.shared_first_row) * s.hidden;
  }
  combine_token_slice(row_of, a.apply_weights ? a.topk_weights : nullptr, shared_y, t, h0, s.hidden,
                      a.top_k, a.out);
}

// Thread d tells rank d that this rank passed its step's end, then waits for rank d's word.
__global__ void ep_barrier_kernel(EpStep s) {
  int const d = static_cast<int>(threadIdx.x);
  if (d >= s.peers.ranks) {
    return;
  }
  int const epoch = __ldcg(s.epoch);
  hopper::publish(s.peers.rank[d].barrier_flags + s.rank, epoch, s.system_scope);
  wait_or_flag(s, s.peers.rank[s.rank].barrier_flags + d, epoch, kWaitBarrier, d);
}

__global__ void ep_advance_epoch_kernel(int* epoch) {
  atomicAdd(epoch, 1);
}

Status check_step(EpStep const& s) {
  GCMOE_CHECK_ARG_MSG(s.peers.ranks >= 1 && s.peers.ranks <= kMaxEpRanks, "ep: 1 to 8 ranks");
  GCMOE_CHECK_ARG_MSG(s.rank >= 0 && s.rank < s.peers.ranks, "ep: rank out of range");
  GCMOE_CHECK_ARG_MSG(s.parity == 0 || s.parity == 1, "ep: parity is 0 or 1");
  GCMOE_CHECK_ARG_MSG(
      s.num_experts >= s.peers.ranks && s.num_experts % s.peers.ranks == 0 && s.num_experts <= 1024,
      "ep: experts must be a multiple of the ranks, at most 1024");
  GCMOE_CHECK_ARG_MSG(s.hidden > 0 && s.hidden % kGroup == 0 &&
                          s.hidden <= kGroup * kRowQuantWarps * kRowQuantMaxGroups,
                      "ep: hidden must be a positive multiple of 128, at most 8192");
  GCMOE_CHECK_ARG_MSG(s.epoch != nullptr && s.error != nullptr, "ep: epoch and error required");
  for (int r = 0; r < s.peers.ranks; ++r) {
    EpRankBuffers const& b = s.peers.rank[r];
    for (int p = 0; p < 2; ++p) {
      GCMOE_CHECK_ARG_MSG(b.recv_xq[p] != nullptr && b.recv_scales[p] != nullptr &&
                              b.recv_weights[p] != nullptr && b.row_flags[p] != nullptr &&
                              b.counts[p] != nullptr && b.count_flags[p] != nullptr,
                          "ep: a peer's receive buffer is null");
    }
    GCMOE_CHECK_ARG_MSG(b.done_flags != nullptr && b.y != nullptr, "ep: a peer's output is null");
  }
  return Status();
}

}  // namespace

Status ep_publish_counts(EpStep const& step, int const* expert_offsets, int const* wait_layout,
                         cudaStream_t stream) {
  GCMOE_RETURN_IF_ERROR(check_step(step));
  ep_publish_counts_kernel<<<1, kPlanThreads, 0, stream>>>(step, expert_offsets, wait_layout);
  GCMOE_CHECK_LAUNCH();
  return Status();
}

Status ep_plan(EpStep const& step, EpPlanOutputs const& out, cudaStream_t stream) {
  GCMOE_RETURN_IF_ERROR(check_step(step));
  GCMOE_CHECK_ARG_MSG(out.recv_offsets == nullptr || (out.active != nullptr && out.num_active),
                      "ep plan: the receive layout needs active and num_active");
  std::size_t const smem =
      sizeof(int) * static_cast<std::size_t>(step.num_experts) * (step.peers.ranks + 1);
  ep_plan_kernel<<<1, kPlanThreads, smem, stream>>>(step, out);
  GCMOE_CHECK_LAUNCH();
  return Status();
}

Status ep_dispatch_rows(EpStep const& step, EpDispatchRows const& rows, cudaStream_t stream) {
  GCMOE_RETURN_IF_ERROR(check_step(step));
  GCMOE_CHECK_ARG_MSG(rows.x != nullptr && rows.sorted_ids != nullptr && rows.topk_ids &&
                          rows.topk_weights && rows.expert_offsets && rows.send_base &&
                          rows.pair_rank && rows.pair_row,
                      "ep dispatch: null buffer");
  int const pairs = rows.num_tokens * rows.top_k;
  if (pairs <= 0) {
    return Status();
  }
  ep_dispatch_rows_kernel<<<static_cast<unsigned>(pairs), kRowQuantWarps * 32, 0, stream>>>(step,
                                                                                            rows);
  GCMOE_CHECK_LAUNCH();
  return Status();
}

Status ep_dispatch_shared_rows(EpStep const& step, float const* x, int num_tokens,
                               RequantScale recipe, int const* recv_offsets, cudaStream_t stream) {
  GCMOE_RETURN_IF_ERROR(check_step(step));
  GCMOE_CHECK_ARG_MSG(x != nullptr && recv_offsets != nullptr, "ep shared dispatch: null buffer");
  if (num_tokens <= 0) {
    return Status();
  }
  ep_dispatch_shared_rows_kernel<<<static_cast<unsigned>(num_tokens), kRowQuantWarps * 32, 0,
                                   stream>>>(step, x, recipe, recv_offsets);
  GCMOE_CHECK_LAUNCH();
  return Status();
}

Status ep_signal_done(EpStep const& step, cudaStream_t stream) {
  GCMOE_RETURN_IF_ERROR(check_step(step));
  ep_signal_done_kernel<<<1, 32, 0, stream>>>(step);
  GCMOE_CHECK_LAUNCH();
  return Status();
}

Status ep_combine(EpStep const& step, EpCombine const& combine, cudaStream_t stream) {
  GCMOE_RETURN_IF_ERROR(check_step(step));
  GCMOE_CHECK_ARG_MSG(combine.pair_rank && combine.pair_row && combine.out &&
                          (!combine.apply_weights || combine.topk_weights),
                      "ep combine: null buffer");
  GCMOE_CHECK_ARG_MSG(
      combine.clear_rows >= 0 && (combine.clear_rows == 0 || combine.clear != nullptr),
      "ep combine: counters to clear without a buffer");
  if (combine.num_tokens <= 0) {
    return Status();
  }
  dim3 const grid(static_cast<unsigned>(combine.num_tokens),
                  static_cast<unsigned>((step.hidden / 8 + kCombineThreads - 1) / kCombineThreads));
  ep_combine_kernel<<<grid, kCombineThreads, 0, stream>>>(step, combine);
  GCMOE_CHECK_LAUNCH();
  return Status();
}

Status ep_clean_and_barrier(EpStep const& step, std::int64_t capacity, cudaStream_t stream) {
  GCMOE_RETURN_IF_ERROR(check_step(step));
  EpRankBuffers const& own = step.peers.rank[step.rank];
  GCMOE_CHECK_ARG_MSG(capacity > 0 && own.barrier_flags != nullptr,
                      "ep clean and barrier: no capacity or barrier flags");
  int const p = step.parity;
  std::size_t const ranks = static_cast<std::size_t>(step.peers.ranks);
  GCMOE_CHECK_CUDA(cudaMemsetAsync(own.row_flags[p], 0, sizeof(int) * capacity, stream));
  GCMOE_CHECK_CUDA(cudaMemsetAsync(
      own.counts[p], 0, sizeof(int) * ranks * static_cast<std::size_t>(step.num_experts), stream));
  GCMOE_CHECK_CUDA(cudaMemsetAsync(own.count_flags[p], 0, sizeof(int) * ranks, stream));
  ep_barrier_kernel<<<1, 32, 0, stream>>>(step);
  GCMOE_CHECK_LAUNCH();
  return Status();
}

Status ep_advance_epoch(int* epoch, cudaStream_t stream) {
  GCMOE_CHECK_ARG_MSG(epoch != nullptr, "ep: null epoch");
  ep_advance_epoch_kernel<<<1, 1, 0, stream>>>(epoch);
  GCMOE_CHECK_LAUNCH();
  return Status();
}

Status preload_ep_dispatch() {
  cudaFuncAttributes attributes{};
  GCMOE_CHECK_CUDA(cudaFuncGetAttributes(&attributes, ep_publish_counts_kernel));
  GCMOE_CHECK_CUDA(cudaFuncGetAttributes(&attributes, ep_plan_kernel));
  GCMOE_CHECK_CUDA(cudaFuncGetAttributes(&attributes, ep_dispatch_rows_kernel));
  GCMOE_CHECK_CUDA(cudaFuncGetAttributes(&attributes, ep_dispatch_shared_rows_kernel));
  GCMOE_CHECK_CUDA(cudaFuncGetAttributes(&attributes, ep_signal_done_kernel));
  GCMOE_CHECK_CUDA(cudaFuncGetAttributes(&attributes, ep_combine_kernel));
  GCMOE_CHECK_CUDA(cudaFuncGetAttributes(&attributes, ep_barrier_kernel));
  GCMOE_CHECK_CUDA(cudaFuncGetAttributes(&attributes, ep_advance_epoch_kernel));
  return Status();
}

}  // namespace gcmoe::kernels
