#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include "engine/common/cuda_check.h"
#include "kernels/moe/fp8_activation_math.cuh"
#include "kernels/moe/moe_local_dispatch.h"

namespace gcmoe::kernels {
namespace {

constexpr int kGroup = 128;
constexpr int kDispatchWarps = 8;    // groups of one row per block (grid.y covers the rest)
constexpr int kCombineThreads = 64;  // 8 hidden values each: 512 per block
constexpr unsigned kFullMask = 0xffffffffu;

// Block (row, y): warp w quantizes the row's group y·8 + w (128 values, 4 per lane), so every
// group of every row is in flight at once (decode has few rows).
__global__ void __launch_bounds__(kDispatchWarps * 32) local_dispatch_kernel(LocalDispatchArgs a) {
  int const row = static_cast<int>(blockIdx.x);
  int const warp = static_cast<int>(threadIdx.x) / 32;
  int const lane = static_cast<int>(threadIdx.x) % 32;
  int const pairs = a.num_tokens * a.top_k;
  int pair = row;
  int token = row;
  if (a.sorted_ids != nullptr) {
    pair = a.sorted_ids[row];
    token = pair < pairs ? pair / a.top_k : -1;
  }
  if (threadIdx.x == 0 && blockIdx.y == 0) {
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
  int const g = static_cast<int>(blockIdx.y) * kDispatchWarps + warp;
  if (g < groups) {
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (token >= 0) {
      v = reinterpret_cast<float4 const*>(a.x + static_cast<std::int64_t>(token) * a.hidden +
                                          g * kGroup)[lane];
    }
    float m = fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w)));
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
      m = fmaxf(m, __shfl_xor_sync(kFullMask, m, offset));
    }
    float scale = 0.0f;
    std::uint32_t packed = 0;
    if (token >= 0) {
      scale = fp8_group_scale(a.recipe, m);
      float const values[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        packed |= static_cast<std::uint32_t>(fp8_encode(values[i], scale)) << (8 * i);
      }
    }
    std::int64_t const base = static_cast<std::int64_t>(row) * a.hidden + g * kGroup;
    reinterpret_cast<std::uint32_t*>(a.xq + base)[lane] = packed;
    if (lane == 0) {
      a.x_scales[static_cast<std::int64_t>(row) * groups + g] = scale;
    }
  }
}

// One thread per routed expert: ballot + warp-count prefix. Thread 0 (after the barrier) appends
// the shared expert.
__global__ void __launch_bounds__(1024) compact_active_kernel(ActiveExpertsArgs a) {
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
}

// Block (token, y): each thread sums 8 consecutive hidden values (16-byte bf16 loads) over the
// token's k slots in slot order, then the shared expert, in fp32; rounded once to bf16.
__global__ void __launch_bounds__(kCombineThreads) local_combine_kernel(LocalCombineArgs a) {
  int const t = static_cast<int>(blockIdx.x);
  int const h0 =
      (static_cast<int>(blockIdx.y) * kCombineThreads + static_cast<int>(threadIdx.x)) * 8;
  if (h0 >= a.hidden) {
    return;
  }
  float acc[8] = {};
  auto const add_row = [&](std::uint16_t const* row, float weight) {
    uint4 const v = *reinterpret_cast<uint4 const*>(row + h0);
    std::uint32_t const words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      acc[2 * i] += weight * __uint_as_float(words[i] << 16);
      acc[2 * i + 1] += weight * __uint_as_float(words[i] & 0xffff0000u);
    }
  };
  for (int j = 0; j < a.top_k; ++j) {
    int const pair = t * a.top_k + j;
    std::int64_t const row = a.pair_row[pair];
    add_row(a.y + row * a.hidden, a.apply_weights ? a.topk_weights[pair] : 1.0f);
  }
  if (a.shared_y != nullptr) {
    add_row(a.shared_y + static_cast<std::int64_t>(t) * a.hidden, 1.0f);
  }
  float* const out = a.out + static_cast<std::int64_t>(t) * a.hidden + h0;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    out[i] = __bfloat162float(__float2bfloat16_rn(acc[i]));
  }
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
  if (args.rows <= 0) {
    return Status();
  }
  dim3 const grid(
      static_cast<unsigned>(args.rows),
      static_cast<unsigned>((args.hidden / kGroup + kDispatchWarps - 1) / kDispatchWarps));
  local_dispatch_kernel<<<grid, kDispatchWarps * 32, 0, stream>>>(args);
  GCMOE_CHECK_LAUNCH();
  return Status();
}

Status compact_active_experts(ActiveExpertsArgs const& args, cudaStream_t stream) {
  GCMOE_CHECK_ARG_MSG(args.num_experts >= 1 && args.num_experts <= 1023,
                      "active experts: 1 to 1023 routed experts");
  GCMOE_CHECK_ARG_MSG(args.expert_offsets != nullptr && args.active_experts != nullptr &&
                          args.num_active != nullptr,
                      "active experts: null buffer");
  int const threads = (args.num_experts + 31) / 32 * 32;
  compact_active_kernel<<<1, threads, 0, stream>>>(args);
  GCMOE_CHECK_LAUNCH();
  return Status();
}

Status local_combine(LocalCombineArgs const& args, cudaStream_t stream) {
  GCMOE_CHECK_ARG_MSG(args.y != nullptr && args.pair_row != nullptr && args.out != nullptr &&
                          (!args.apply_weights || args.topk_weights != nullptr),
                      "local combine: null buffer");
  if (args.num_tokens <= 0) {
    return Status();
  }
  GCMOE_CHECK_ARG_MSG(args.hidden % 8 == 0, "local combine: hidden must be a multiple of 8");
  dim3 const grid(static_cast<unsigned>(args.num_tokens),
                  static_cast<unsigned>((args.hidden / 8 + kCombineThreads - 1) / kCombineThreads));
  local_combine_kernel<<<grid, kCombineThreads, 0, stream>>>(args);
  GCMOE_CHECK_LAUNCH();
  return Status();
}

}  // namespace gcmoe::kernels
