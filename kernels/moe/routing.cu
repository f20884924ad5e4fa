#include <climits>
#include <cstdint>

#include "engine/common/cuda_check.h"
#include "kernels/hopper/pdl_launch.h"
#include "kernels/hopper/ptx.cuh"
#include "kernels/moe/router_logits_gemv.h"
#include "kernels/moe/router_logits_mma.h"
#include "kernels/moe/routing.h"

namespace gcmoe::kernels {
namespace {

constexpr int kTileT = 64;
constexpr int kTileE = 64;
constexpr int kTileK = 16;
constexpr int kGemmThreads = 256;  // 16 x 16 threads, 4 x 4 outputs each
constexpr int kTargetBlocks = 264;
constexpr int kMinSplitK = 128;
// Split boundaries: whole k-tiles of both GEMM kernels (the tensor-core one's are 32 wide).
constexpr int kSplitAlign = kRouterMmaTileK;
static_assert(kSplitAlign % kTileK == 0 && kTileT == kRouterMmaTileT && kTileE == kRouterMmaTileE,
              "one split plan serves both GEMM kernels");
constexpr int kTopkThreads = 128;
constexpr int kPerThread = kRouterMaxExperts / kTopkThreads;
constexpr int kPerLane = kRouterMaxExperts / 32;
constexpr unsigned kFullMask = 0xffffffffu;

struct Plan {
  int tiles_t;
  int tiles_e;
  int splits;
  int k_per_split;
};

Plan make_plan(RouterShape const& shape) {
  Plan p{};
  p.tiles_t = (shape.num_tokens + kTileT - 1) / kTileT;
  p.tiles_e = (shape.num_experts + kTileE - 1) / kTileE;
  int const tiles = p.tiles_t * p.tiles_e > 0 ? p.tiles_t * p.tiles_e : 1;
  int splits = (kTargetBlocks + tiles - 1) / tiles;
  int const max_splits = (shape.hidden + kMinSplitK - 1) / kMinSplitK;
  splits = splits < max_splits ? splits : max_splits;
  splits = splits < 1 ? 1 : splits;
  int k_per = (shape.hidden + splits - 1) / splits;
  p.k_per_split = (k_per + kSplitAlign - 1) / kSplitAlign * kSplitAlign;
  p.splits = (shape.hidden + p.k_per_split - 1) / p.k_per_split;
  return p;
}

// partial[split][t][e] = sum over h in the split's range of x[t][h] * w[e][h], fp32, h ascending.
__global__ void __launch_bounds__(kGemmThreads)
    router_logits_kernel(float const* __restrict__ x, float const* __restrict__ w, int tokens,
                         int hidden, int experts, int k_per_split, float* __restrict__ partial,
                         bool chained) {
  hopper::enter_launch_chain(chained);
  __shared__ float xs[kTileK][kTileT + 4];
  __shared__ float ws[kTileK][kTileE + 4];
  int const tid = static_cast<int>(threadIdx.x);
  int const t0 = static_cast<int>(blockIdx.y) * kTileT;
  int const e0 = static_cast<int>(blockIdx.x) * kTileE;
  int const k_begin = static_cast<int>(blockIdx.z) * k_per_split;
  int const k_end = min(hidden, k_begin + k_per_split);
  int const load_row = tid >> 2;
  int const load_k = (tid & 3) * 4;
  int const tx = tid & 15;
  int const ty = tid >> 4;
  int const xt = t0 + load_row;
  int const we = e0 + load_row;
  float const* x_row = x + static_cast<std::size_t>(xt < tokens ? xt : 0) * hidden;
  float const* w_row = w + static_cast<std::size_t>(we < experts ? we : 0) * hidden;
  float acc[4][4] = {};
  // Register double buffering: the next k-tile's loads are in flight during this tile's FMAs.
  float x_next[4];
  float w_next[4];
  auto load_tile = [&](int k0) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      int const kk = k0 + load_k + j;
      x_next[j] = (xt < tokens && kk < k_end) ? x_row[kk] : 0.0f;
      w_next[j] = (we < experts && kk < k_end) ? w_row[kk] : 0.0f;
    }
  };
  load_tile(k_begin);
  for (int k0 = k_begin; k0 < k_end; k0 += kTileK) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      xs[load_k + j][load_row] = x_next[j];
      ws[load_k + j][load_row] = w_next[j];
    }
    __syncthreads();
    if (k0 + kTileK < k_end) {
      load_tile(k0 + kTileK);
    }
#pragma unroll
    for (int kk = 0; kk < kTileK; ++kk) {
      float a[4];
      float b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        a[i] = xs[kk][ty * 4 + i];
        b[i] = ws[kk][tx * 4 + i];
      }
#pragma unroll
      for (int i = 0; i < 4; ++i) {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    int const t = t0 + ty * 4 + i;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      int const e = e0 + tx * 4 + j;
      if (t < tokens && e < experts) {
        partial[(static_cast<std::size_t>(blockIdx.z) * tokens + t) * experts + e] = acc[i][j];
      }
    }
  }
}

__device__ __forceinline__ float score_of(RouterScore score, float logit) {
  switch (score) {
    case RouterScore::kSqrtSoftplus:
      return sqrtf(logit > 20.0f ? logit : log1pf(expf(logit)));
    case RouterScore::kSigmoid:
      return 1.0f / (1.0f + expf(-logit));
  }
  return 0.0f;
}

struct TopkArgs {
  int splits;
  int tokens;
  int experts;
  int top_k;
  RouterScore score;
  bool renormalize;
  float renorm_epsilon;
  float routed_scaling;
};

// One block per token. Its threads sum the token's split partials (each thread a few experts, the
// loads of several splits in flight at once: with many splits this sum was the kernel's cost when
// one warp did it) and score them into shared memory; then warp 0 selects: lane l holds the
// selection scores of experts l, l + 32, ... in registers (indexed only by unrolled constants).
__global__ void __launch_bounds__(kTopkThreads)
    router_topk_kernel(float const* __restrict__ partial, TopkArgs args, RouterDeviceInputs inputs,
                       RouterDeviceOutputs outputs, bool chained) {
  hopper::enter_launch_chain(chained);
  int const tid = static_cast<int>(threadIdx.x);
  int const t = static_cast<int>(blockIdx.x);
  __shared__ float s[kRouterMaxExperts];       // scores (the weights' source)
  __shared__ float biased[kRouterMaxExperts];  // selection scores (score + bias)
  // Logits: the split partials added in split order, from 0 (the order of every earlier version).
  float logit[kPerThread];
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    logit[i] = 0.0f;
  }
#pragma unroll 8
  for (int sp = 0; sp < args.splits; ++sp) {
    float const* row = partial + (static_cast<std::size_t>(sp) * args.tokens + t) * args.experts;
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      int const e = tid + kTopkThreads * i;
      if (e < args.experts) {
        logit[i] += row[e];
      }
    }
  }
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    int const e = tid + kTopkThreads * i;
    if (e < args.experts) {
      float const score = score_of(args.score, logit[i]);
      s[e] = score;
      biased[e] = inputs.bias != nullptr ? score + inputs.bias[e] : score;
    }
  }
  __syncthreads();
  if (tid >= 32) {
    return;
  }
  int const lane = tid;
  float sel[kPerLane];
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) {
    int const e = lane + 32 * i;
    sel[i] = e < args.experts ? biased[e] : -INFINITY;
  }
  int my_id = 0;
  float my_s = 0.0f;
  float sum = 0.0f;
  for (int j = 0; j < args.top_k; ++j) {
    int best_e = 0;
    float best_s = 0.0f;
    if (inputs.hash_table != nullptr) {
      best_e = inputs.hash_table[static_cast<std::size_t>(inputs.token_ids[t]) * args.top_k + j];
      best_s = s[best_e];
    } else {
      float bv = -INFINITY;
      int be = INT_MAX;
#pragma unroll
      for (int i = 0; i < kPerLane; ++i) {
        if (sel[i] > bv) {  // strict: the lower expert of this lane wins a tie
          bv = sel[i];
          be = lane + 32 * i;
        }
      }
#pragma unroll
      for (int offset = 16; offset > 0; offset >>= 1) {
        float const ov = __shfl_xor_sync(kFullMask, bv, offset);
        int const oe = __shfl_xor_sync(kFullMask, be, offset);
        if (ov > bv || (ov == bv && oe < be)) {
          bv = ov;
          be = oe;
        }
      }
      best_e = be;
      best_s = s[best_e];
#pragma unroll
      for (int i = 0; i < kPerLane; ++i) {
        if (lane + 32 * i == best_e) {
          sel[i] = -INFINITY;
        }
      }
    }
    if (lane == j) {
      my_id = best_e;
      my_s = best_s;
    }
    sum += best_s;
  }
  if (lane < args.top_k) {
    float const w = args.renormalize ? my_s / (sum + args.renorm_epsilon) : my_s;
    std::size_t const slot = static_cast<std::size_t>(t) * args.top_k + lane;
    outputs.topk_ids[slot] = my_id;
    outputs.topk_weights[slot] = w * args.routed_scaling;
  }
}

}  // namespace

std::size_t router_workspace_bytes(RouterShape const& shape) {
  if (shape.num_tokens <= 0 || shape.num_experts <= 0 || shape.hidden <= 0) {
    return 0;
  }
  Plan const p = make_plan(shape);
  return static_cast<std::size_t>(p.splits) * static_cast<std::size_t>(shape.num_tokens) *
         static_cast<std::size_t>(shape.num_experts) * sizeof(float);
}

Status route(RouterDeviceInputs const& inputs, RouterShape const& shape, RouterParams const& params,
             RouterDeviceOutputs const& outputs, void* workspace, std::size_t workspace_bytes,
             cudaStream_t stream, bool chained) {
  GCMOE_RETURN_IF_ERROR(validate_router_shape(shape));
  if (shape.num_tokens == 0) {
    return Status();
  }
  GCMOE_CHECK_ARG_MSG(inputs.x != nullptr && inputs.gate_weight != nullptr,
                      "router: null x or gate weight");
  GCMOE_CHECK_ARG_MSG(inputs.hash_table == nullptr || inputs.token_ids != nullptr,
                      "router: a hash layer needs the token ids");
  GCMOE_CHECK_ARG_MSG(outputs.topk_ids != nullptr && outputs.topk_weights != nullptr,
                      "router: null output");
  GCMOE_CHECK_ARG_MSG(workspace != nullptr && workspace_bytes >= router_workspace_bytes(shape),
                      "router: workspace smaller than router_workspace_bytes(shape)");
  GCMOE_CHECK_ARG_MSG(shape.num_tokens <= 65535 * kTileT, "router: too many tokens");
  // The kernel implements the released text-only routers: V4.1's gate temperature is 1.0 there
  // (router_ref.h has the general form). Refuse, rather than silently ignore, anything else.
  GCMOE_CHECK_ARG_MSG(params.gate_temperature == 1.0f,
                      "router: gate_temperature != 1 is not implemented on the GPU");
  Plan const p = make_plan(shape);
  auto* partial = static_cast<float*>(workspace);
  bool const gemv =
      router_gemv_supported(inputs.x, inputs.gate_weight, shape.num_tokens, shape.hidden);
  if (gemv) {
    GCMOE_CHECK_CUDA(launch_router_logits_gemv(inputs.x, inputs.gate_weight, shape.num_tokens,
                                               shape.hidden, shape.num_experts, partial, stream,
                                               chained));
  } else if (router_mma_supported(inputs.x, inputs.gate_weight, shape.hidden)) {
    GCMOE_CHECK_CUDA(launch_router_logits_mma(inputs.x, inputs.gate_weight, shape.num_tokens,
                                              shape.hidden, shape.num_experts, p.k_per_split,
                                              p.splits, partial, stream, chained));
  } else {
    dim3 const gemm_grid(static_cast<unsigned>(p.tiles_e), static_cast<unsigned>(p.tiles_t),
                         static_cast<unsigned>(p.splits));
    GCMOE_CHECK_CUDA(hopper::launch_with_pdl(router_logits_kernel, gemm_grid, dim3(kGemmThreads), 0,
                                             stream, chained, inputs.x, inputs.gate_weight,
                                             shape.num_tokens, shape.hidden, shape.num_experts,
                                             p.k_per_split, partial, chained));
  }
  TopkArgs const args{.splits = gemv ? 1 : p.splits,
                      .tokens = shape.num_tokens,
                      .experts = shape.num_experts,
                      .top_k = shape.top_k,
                      .score = params.score,
                      .renormalize = params.renormalize,
                      .renorm_epsilon = params.renorm_epsilon,
                      .routed_scaling = params.routed_scaling};
  GCMOE_CHECK_CUDA(hopper::launch_with_pdl(
      router_topk_kernel, dim3(static_cast<unsigned>(shape.num_tokens)), dim3(kTopkThreads), 0,
      stream, chained, partial, args, inputs, outputs, chained));
  return Status();
}

}  // namespace gcmoe::kernels
