#include "kernels/moe/moe_layer_sequential.h"

#include <algorithm>

#include "engine/common/check.h"
#include "kernels/moe/fp8_expert_wgmma.h"
#include "kernels/moe/moe_local_dispatch.h"
#include "kernels/moe/routing.h"

namespace gcmoe::kernels {
namespace {

template <typename T>
Status allocate(cuda::DeviceBuffer<T>& buffer, std::int64_t count) {
  GCMOE_ASSIGN_OR_RETURN(buffer, cuda::DeviceBuffer<T>::allocate(
                                     static_cast<std::size_t>(std::max<std::int64_t>(count, 1))));
  return Status();
}

RequantScale requant_of(formats::ActivationRecipe recipe) {
  switch (recipe) {
    case formats::ActivationRecipe::kDeepseekUe8m0:
      return RequantScale::kPow2;
    case formats::ActivationRecipe::kGlmDynamic:
    case formats::ActivationRecipe::kExactFp32:
      return RequantScale::kAmaxOver448;
  }
  return RequantScale::kAmaxOver448;
}

// L1 then L2 of the experts in `active` over rows grouped by `offsets`.
Status run_experts(Fp8ExpertGemmArgs l1, std::uint8_t const* experts,
                   PackedExpertSections const& sections, int hidden, int inter, std::uint8_t* h,
                   float* h_scales, std::uint16_t* y, cudaStream_t stream) {
  l1.stage = ExpertGemmStage::kGateUp;
  l1.weights = experts + sections.l1_codes;
  l1.weight_scales = reinterpret_cast<float const*>(experts + sections.l1_scales);
  l1.weight_stride = sections.stride;
  l1.scale_stride = sections.stride / static_cast<std::int64_t>(sizeof(float));
  l1.tiles = inter / 8;
  l1.chunks = hidden / 128;
  l1.h = h;
  l1.h_scales = h_scales;
  GCMOE_RETURN_IF_ERROR(launch_fp8_expert_wgmma(l1, stream));
  Fp8ExpertGemmArgs l2 = l1;
  l2.stage = ExpertGemmStage::kDown;
  l2.weights = experts + sections.l2_codes;
  l2.weight_scales = reinterpret_cast<float const*>(experts + sections.l2_scales);
  l2.tiles = hidden / 16;
  l2.chunks = inter / 128;
  l2.x = h;
  l2.x_scales = h_scales;
  l2.route_weights = nullptr;
  l2.y = y;
  return launch_fp8_expert_wgmma(l2, stream);
}

}  // namespace

StatusOr<MoeLayerSequential> MoeLayerSequential::create(MoeLayerConfig const& config,
                                                        int max_tokens) {
  GCMOE_CHECK_ARG(max_tokens >= 1, "max_tokens {} < 1", max_tokens);
  GCMOE_CHECK_ARG(config.hidden % 128 == 0 && config.intermediate % 128 == 0,
                  "hidden {} / intermediate {} must be multiples of 128", config.hidden,
                  config.intermediate);
  GCMOE_CHECK_ARG(config.num_experts <= 1023, "{} routed experts: at most 1023 (+ 1 shared)",
                  config.num_experts);
  GCMOE_CHECK_ARG(config.expert.activation_recipe != formats::ActivationRecipe::kExactFp32,
                  "the GPU layer runs the FP8 activation recipe of the model");
  MoeLayerSequential layer;
  layer.config_ = config;
  layer.max_tokens_ = max_tokens;
  std::int64_t const t = max_tokens;
  std::int64_t const k = config.top_k;
  std::int64_t const h = config.hidden;
  std::int64_t const rows = t * k + t;  // routed rows, then the shared expert's
  std::int64_t const groups = h / 128;
  std::int64_t const inter = config.intermediate;
  RouterShape const rshape{max_tokens, config.hidden, config.num_experts, config.top_k};
  AlignSortShape const ashape{max_tokens, config.top_k, config.num_experts, 1};
  GCMOE_RETURN_IF_ERROR(validate_align_sort_shape(ashape));
  GCMOE_RETURN_IF_ERROR(
      allocate(layer.router_workspace_, static_cast<std::int64_t>(router_workspace_bytes(rshape))));
  std::size_t const align_bytes = align_sort_workspace_bytes(config.num_experts);
  GCMOE_RETURN_IF_ERROR(allocate(layer.align_workspace_, static_cast<std::int64_t>(align_bytes)));
  GCMOE_RETURN_IF_ERROR(
      align_sort_init_workspace(layer.align_workspace_.data(), align_bytes, nullptr));
  GCMOE_RETURN_IF_ERROR(allocate(layer.topk_ids_, t * k));
  GCMOE_RETURN_IF_ERROR(allocate(layer.topk_weights_, t * k));
  GCMOE_RETURN_IF_ERROR(allocate(layer.sorted_ids_, ashape.capacity()));
  GCMOE_RETURN_IF_ERROR(allocate(layer.block_experts_, ashape.max_blocks()));
  GCMOE_RETURN_IF_ERROR(allocate(layer.expert_offsets_, config.num_experts + 2));
  GCMOE_RETURN_IF_ERROR(allocate(layer.total_padded_, 1));
  GCMOE_RETURN_IF_ERROR(allocate(layer.pair_row_, t * k));
  GCMOE_RETURN_IF_ERROR(allocate(layer.xq_, rows * h));
  GCMOE_RETURN_IF_ERROR(allocate(layer.x_scales_, rows * groups));
  GCMOE_RETURN_IF_ERROR(allocate(layer.row_weights_, rows));
  GCMOE_RETURN_IF_ERROR(allocate(layer.h_, rows * inter));
  GCMOE_RETURN_IF_ERROR(allocate(layer.h_scales_, rows * (inter / 128)));
  GCMOE_RETURN_IF_ERROR(allocate(layer.y_, rows * h));
  GCMOE_RETURN_IF_ERROR(allocate(layer.active_, config.num_experts + 1));
  GCMOE_RETURN_IF_ERROR(allocate(layer.num_active_, 1));
  GCMOE_RETURN_IF_ERROR(preload_fp8_expert_wgmma());
  return layer;
}

Status MoeLayerSequential::run(MoeLayerDeviceWeights const& weights, float const* x, int num_tokens,
                               float* out, cudaStream_t stream) {
  GCMOE_CHECK_ARG(num_tokens >= 0 && num_tokens <= max_tokens_, "{} tokens, at most {}", num_tokens,
                  max_tokens_);
  GCMOE_CHECK_ARG(weights.gate_weight != nullptr && weights.experts != nullptr,
                  "null router or expert weights");
  if (num_tokens == 0) {
    return Status();
  }
  MoeLayerConfig const& c = config_;
  int const k = c.top_k;
  int const rows = num_tokens * k;
  RouterShape const rshape{num_tokens, c.hidden, c.num_experts, k};
  GCMOE_RETURN_IF_ERROR(route({.x = x, .gate_weight = weights.gate_weight, .bias = weights.bias},
                              rshape, c.router,
                              {.topk_ids = topk_ids_.data(), .topk_weights = topk_weights_.data()},
                              router_workspace_.data(), router_workspace_.size(), stream));
  // Block size 1: segments are exactly the routed rows (the GEMM needs no padding).
  AlignSortShape const ashape{num_tokens, k, c.num_experts, 1};
  GCMOE_RETURN_IF_ERROR(align_sort(topk_ids_.data(), ashape,
                                   {.sorted_ids = sorted_ids_.data(),
                                    .block_experts = block_experts_.data(),
                                    .expert_offsets = expert_offsets_.data(),
                                    .total_padded = total_padded_.data()},
                                   align_workspace_.data(), align_workspace_.size(), stream));
  bool const shared = weights.has_shared;
  GCMOE_RETURN_IF_ERROR(compact_active_experts({.expert_offsets = expert_offsets_.data(),
                                                .num_experts = c.num_experts,
                                                .num_tokens = num_tokens,
                                                .shared_expert = shared,
                                                .active_experts = active_.data(),
                                                .num_active = num_active_.data()},
                                               stream));
  RequantScale const recipe = requant_of(c.expert.activation_recipe);
  GCMOE_RETURN_IF_ERROR(local_dispatch({.x = x,
                                        .sorted_ids = sorted_ids_.data(),
                                        .num_tokens = num_tokens,
                                        .top_k = k,
                                        .hidden = c.hidden,
                                        .rows = rows,
                                        .recipe = recipe,
                                        .topk_weights = topk_weights_.data(),
                                        .xq = xq_.data(),
                                        .x_scales = x_scales_.data(),
                                        .row_weights = row_weights_.data(),
                                        .pair_row = pair_row_.data()},
                                       stream));
  std::int64_t const groups = c.hidden / 128;
  if (shared) {
    // The shared expert's rows follow the routed ones, in token order, weight 1.
    GCMOE_RETURN_IF_ERROR(local_dispatch({.x = x,
                                          .num_tokens = num_tokens,
                                          .top_k = 1,
                                          .hidden = c.hidden,
                                          .rows = num_tokens,
                                          .recipe = recipe,
                                          .xq = xq_.data() + std::int64_t{rows} * c.hidden,
                                          .x_scales = x_scales_.data() + rows * groups,
                                          .row_weights = row_weights_.data() + rows},
                                         stream));
  }
  Fp8ExpertGemmArgs routed;
  routed.x = xq_.data();
  routed.x_scales = x_scales_.data();
  routed.expert_offsets = expert_offsets_.data();
  routed.active_experts = active_.data();
  routed.num_active = num_active_.data();
  routed.max_active = std::min(c.num_experts, rows) + (shared ? 1 : 0);
  routed.rows_per_expert_hint = num_tokens;  // an expert sees a token at most once
  routed.requant = recipe;
  routed.swiglu_limit = c.expert.swiglu_limit;
  routed.route_weights = c.expert.weight_before_down ? row_weights_.data() : nullptr;
  GCMOE_RETURN_IF_ERROR(run_experts(routed, weights.experts, weights.sections, c.hidden,
                                    c.intermediate, h_.data(), h_scales_.data(), y_.data(),
                                    stream));
  return local_combine({.y = y_.data(),
                        .pair_row = pair_row_.data(),
                        .topk_weights = topk_weights_.data(),
                        .apply_weights = !c.expert.weight_before_down,
                        .shared_y = shared ? y_.data() + std::int64_t{rows} * c.hidden : nullptr,
                        .num_tokens = num_tokens,
                        .top_k = k,
                        .hidden = c.hidden,
                        .out = out},
                       stream);
}

}  // namespace gcmoe::kernels
