#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include "engine/common/cuda_check.h"
#include "kernels/hopper/pdl_launch.h"
#include "kernels/hopper/ptx.cuh"
#include "kernels/moe/bf16_row_sum.cuh"
#include "kernels/moe/fp8_row_quantize.cuh"
#include "kernels/moe/moe_local_dispatch.h"
#include "kernels/moe/wait_sites.h"

namespace gcmoe::kernels {
namespace {

constexpr int kGroup = 128;
constexpr int kDispatchWarps = kRowQuantWarps;  // one block per row (fp8_row_quantize.cuh)
constexpr int kCombineThreads = 64;             // 8 hidden values each: 512 per block
constexpr unsigned kFullMask = 0xffffffffu;

// Block = row (quantize_row_fp8). With readiness, thread 0 publishes the row once every warp has
// stored its groups.
__global__ void __launch_bounds__(kDispatchWarps * 32) local_dispatch_kernel(LocalDispatchArgs a) {
  if (a.wait_layout != nullptr) {
    if (threadIdx.x == 0 && !hopper::spin_until_at_least(a.wait_layout, *a.epoch, a.timeout_ns)) {
      atomicOr(a.error, kWaitLayout);
    }
    __syncthreads();
  }
  int const row = static_cast<int>(blockIdx.x);
  int const pairs = a.num_tokens * a.top_k;
  int pair = row;
  int token = row;
  if (a.sorted_ids != nullptr) {
    pair = a.sorted_ids[row];
    token = pair < pairs ? pair / a.top_k : -1;
  }
  if (threadIdx.x == 0) {
    if (a.row_weights != nullptr) {
      // Identity rows (the shared expert) are unweighted; padding rows weigh 0.
      a.row_weights[row] =
          a.sorted_ids == nullptr ? 1.0f : (token >= 0 ? a.topk_weights[pair] : 0.0f);
    }
    if (a.pair_row != nullptr && token >= 0) {
      a.pair_row[pair] = row;
    }
  }
  int const groups = a.hidden / kGroup;
  quantize_row_fp8(token >= 0 ? a.x + static_cast<std::int64_t>(token) * a.hidden : nullptr,
                   a.hidden, a.recipe, a.xq + static_cast<std::int64_t>(row) * a.hidden,
                   a.x_scales + static_cast<std::int64_t>(row) * groups);
  if (a.ready_rows != nullptr) {
    __syncthreads();
    if (threadIdx.x == 0) {
      __threadfence();
      hopper::store_release_gpu(a.ready_rows + a.ready_row_base + row, *a.epoch);
    }
  }
}

// One thread per routed expert: ballot + warp-count prefix. Thread 0 (after the barrier) appends
// the shared expert.
__global__ void __launch_bounds__(1024) compact_active_kernel(ActiveExpertsArgs a) {
  hopper::enter_launch_chain(a.chained);
  __shared__ int warp_counts[32];
  int const e = static_cast<int>(threadIdx.x);
  bool const active = e < a.num_experts && a.expert_offsets[e + 1] > a.expert_offsets[e];
  unsigned const ballot = __ballot_sync(kFullMask, active);
  int const lane = e % 32;
  int const warp = e / 32;
  if (lane == 0) {
    warp_counts[warp] = __popc(ballot);
  }
  __syncthreads();
  int before = __popc(ballot & ((1u << lane) - 1u));
  for (int w = 0; w < warp; ++w) {
    before += warp_counts[w];
  }
  if (active) {
    a.active_experts[before] = e;
  }
  if (e == 0) {
    int total = 0;
    for (int w = 0; w < static_cast<int>(blockDim.x) / 32; ++w) {
      total += warp_counts[w];
    }
    if (a.shared_expert) {
      a.expert_offsets[a.num_experts + 1] = a.expert_offsets[a.num_experts] + a.num_tokens;
      if (a.num_tokens > 0) {
        a.active_experts[total++] = a.num_experts;
      }
    }
    *a.num_active = total;
  }
  if (a.layout_ready != nullptr) {
    __syncthreads();
    if (e == 0) {
      __threadfence();
      hopper::store_release_gpu(a.layout_ready, *a.epoch);
    }
  }
}

// Block (token, y): each thread sums 8 consecutive hidden values (16-byte bf16 loads) over the
// token's k slots in slot order, then the shared expert, in fp32; rounded once to bf16.
__global__ void __launch_bounds__(kCombineThreads) local_combine_kernel(LocalCombineArgs a) {
  hopper::enter_launch_chain(a.chained);
  int const t = static_cast<int>(blockIdx.x);
  if (blockIdx.y == 0) {
    // After the wait above: every L2 that read the counters has finished.
    for (int r = 0; r < 2; ++r) {
      zero_token_share(a.clear[r], a.clear_rows[r], t, a.num_tokens);
    }
  }
  int const h0 =
      (static_cast<int>(blockIdx.y) * kCombineThreads + static_cast<int>(threadIdx.x)) * 8;
  if (h0 >= a.hidden) {
    return;
  }
  if (a.epoch_to_advance != nullptr && t == 0 && h0 == 0) {
    atomicAdd(a.epoch_to_advance, 1);
  }
  auto const row_of = [&](int pair) {
    return a.y + static_cast<std::int64_t>(a.pair_row[pair]) * a.hidden;
  };
  combine_token_slice(row_of, a.apply_weights ? a.topk_weights : nullptr, a.shared_y, t, h0,
                      a.hidden, a.top_k, a.out);
}

}  // namespace

Status local_dispatch(LocalDispatchArgs const& args, cudaStream_t stream) {
  GCMOE_CHECK_ARG_MSG(args.x != nullptr && args.xq != nullptr && args.x_scales != nullptr,
                      "local dispatch: null buffer");
  GCMOE_CHECK_ARG_MSG(args.hidden > 0 && args.hidden % kGroup == 0,
                      "local dispatch: hidden must be a positive multiple of 128");
  GCMOE_CHECK_ARG_MSG(
      args.row_weights == nullptr || args.sorted_ids == nullptr || args.topk_weights != nullptr,
      "local dispatch: sorted rows' weights need the top-k weights");
  GCMOE_CHECK_ARG_MSG(args.hidden <= kGroup * kDispatchWarps * kRowQuantMaxGroups,
                      "local dispatch: hidden above 8192");
  GCMOE_CHECK_ARG_MSG(
      (args.ready_rows == nullptr && args.wait_layout == nullptr) || args.epoch != nullptr,
      "local dispatch: readiness needs the epoch");
  GCMOE_CHECK_ARG_MSG(args.wait_layout == nullptr || args.error != nullptr,
                      "local dispatch: waiting for the layout needs an error flag");
  if (args.rows <= 0) {
    return Status();
  }
  local_dispatch_kernel<<<static_cast<unsigned>(args.rows), kDispatchWarps * 32, 0, stream>>>(args);
  GCMOE_CHECK_LAUNCH();
  return Status();
}

Status compact_active_experts(ActiveExpertsArgs const& args, cudaStream_t stream) {
  GCMOE_CHECK_ARG_MSG(args.num_experts >= 1 && args.num_experts <= 1023,
                      "active experts: 1 to 1023 routed experts");
  GCMOE_CHECK_ARG_MSG(args.expert_offsets != nullptr && args.active_experts != nullptr &&
                          args.num_active != nullptr,
                      "active experts: null buffer");
  GCMOE_CHECK_ARG_MSG(args.layout_ready == nullptr || args.epoch != nullptr,
                      "active experts: publishing the layout needs the epoch");
  int const threads = (args.num_experts + 31) / 32 * 32;
  GCMOE_CHECK_CUDA(hopper::launch_with_pdl(compact_active_kernel, dim3(1),
                                           dim3(static_cast<unsigned>(threads)), 0, stream,
                                           args.chained, args));
  return Status();
}

Status local_combine(LocalCombineArgs const& args, cudaStream_t stream) {
  GCMOE_CHECK_ARG_MSG(args.y != nullptr && args.pair_row != nullptr && args.out != nullptr &&
                          (!args.apply_weights || args.topk_weights != nullptr),
                      "local combine: null buffer");
  for (int r = 0; r < 2; ++r) {
    GCMOE_CHECK_ARG_MSG(
        args.clear_rows[r] >= 0 && (args.clear_rows[r] == 0 || args.clear[r] != nullptr),
        "local combine: counters to clear without a buffer");
  }
  if (args.num_tokens <= 0) {
    return Status();
  }
  GCMOE_CHECK_ARG_MSG(args.hidden % 8 == 0, "local combine: hidden must be a multiple of 8");
  dim3 const grid(static_cast<unsigned>(args.num_tokens),
                  static_cast<unsigned>((args.hidden / 8 + kCombineThreads - 1) / kCombineThreads));
  GCMOE_CHECK_CUDA(hopper::launch_with_pdl(local_combine_kernel, grid, dim3(kCombineThreads), 0,
                                           stream, args.chained, args));
  return Status();
}

Status preload_local_dispatch() {
  cudaFuncAttributes attributes{};
  GCMOE_CHECK_CUDA(cudaFuncGetAttributes(&attributes, local_dispatch_kernel));
  GCMOE_CHECK_CUDA(cudaFuncGetAttributes(&attributes, compact_active_kernel));
  GCMOE_CHECK_CUDA(cudaFuncGetAttributes(&attributes, local_combine_kernel));
  return Status();
}

}  // namespace gcmoe::kernels
