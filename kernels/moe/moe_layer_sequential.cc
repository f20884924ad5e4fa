#include "kernels/moe/moe_layer_sequential.h"

#include <algorithm>

#include "engine/common/check.h"
#include "kernels/moe/expert_ffn_launch.h"
#include "kernels/moe/expert_rows_hint.h"
#include "kernels/moe/fp8_expert_wgmma.h"
#include "kernels/moe/moe_local_dispatch.h"
#include "kernels/moe/mxfp4_expert_wgmma.h"
#include "kernels/moe/routing.h"

namespace gcmoe::kernels {
namespace {

template <typename T>
Status allocate(cuda::DeviceBuffer<T>& buffer, std::int64_t count) {
  GCMOE_ASSIGN_OR_RETURN(buffer, cuda::DeviceBuffer<T>::allocate(
                                     static_cast<std::size_t>(std::max<std::int64_t>(count, 1))));
  return Status();
}

// Whether the shared expert runs in the routed experts' launches.
bool shared_in_routed(MoeLayerDeviceWeights const& weights, SharedExpertLaunch shared) {
  return weights.has_shared && shared == SharedExpertLaunch::kWithRouted;
}

// The rows the routed launch pair uses from row 0: T·k routed pairs in expert order, then the
// shared expert's T when it runs in those launches.
std::int64_t routed_rows_used(int num_tokens, int top_k, bool with_shared) {
  return static_cast<std::int64_t>(num_tokens) * (top_k + (with_shared ? 1 : 0));
}

}  // namespace

Status check_shared_launch(MoeLayerDeviceWeights const& weights, SharedExpertLaunch shared) {
  GCMOE_CHECK_ARG(
      !weights.has_shared || shared == SharedExpertLaunch::kSeparate ||
          weights.shared_expert == nullptr,
      "the shared expert is packed apart from the routed experts ({}): it runs in "
      "launches of its own (SharedExpertLaunch::kSeparate), not in the routed launch",
      weights.format == ExpertWeightFormat::kMxfp4 ? "MXFP4 routed, FP8 shared" : "FP8");
  GCMOE_CHECK_ARG(weights.format == ExpertWeightFormat::kFp8Block128 || !weights.has_shared ||
                      weights.shared_expert != nullptr,
                  "MXFP4 routed experts need the shared expert packed apart in FP8 "
                  "(MoeLayerDeviceWeights::shared_expert)");
  return Status();
}

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
  GCMOE_RETURN_IF_ERROR(preload_mxfp4_expert_wgmma());
  return layer;
}

Status MoeLayerSequential::run(MoeLayerDeviceWeights const& weights, float const* x, int num_tokens,
                               float* out, cudaStream_t stream, SharedExpertLaunch shared) {
  bool const separate = weights.has_shared && shared == SharedExpertLaunch::kSeparate;
  GCMOE_RETURN_IF_ERROR(route_and_sort(weights, x, num_tokens, stream, shared));
  GCMOE_RETURN_IF_ERROR(dispatch_routed(x, num_tokens, stream));
  if (weights.has_shared) {
    GCMOE_RETURN_IF_ERROR(dispatch_shared(x, num_tokens, stream, shared));
  }
  GCMOE_RETURN_IF_ERROR(experts_routed(weights, num_tokens, stream, shared));
  if (separate) {
    GCMOE_RETURN_IF_ERROR(experts_shared(weights, num_tokens, stream));
  }
  return combine(weights, num_tokens, out, stream, shared);
}

std::int64_t MoeLayerSequential::shared_first_row(int num_tokens, SharedExpertLaunch shared) const {
  switch (shared) {
    case SharedExpertLaunch::kWithRouted:
      return std::int64_t{num_tokens} * config_.top_k;
    case SharedExpertLaunch::kSeparate:
      return std::int64_t{max_tokens_} * config_.top_k;
  }
  return std::int64_t{max_tokens_} * config_.top_k;
}

Status MoeLayerSequential::check_tokens(int num_tokens) const {
  GCMOE_CHECK_ARG(num_tokens >= 0 && num_tokens <= max_tokens_, "{} tokens, at most {}", num_tokens,
                  max_tokens_);
  return Status();
}

Status MoeLayerSequential::route_and_sort(MoeLayerDeviceWeights const& weights, float const* x,
                                          int num_tokens, cudaStream_t stream,
                                          SharedExpertLaunch shared, MoeLayerSync const* sync) {
  GCMOE_RETURN_IF_ERROR(check_tokens(num_tokens));
  GCMOE_CHECK_ARG(weights.gate_weight != nullptr && weights.experts != nullptr,
                  "null router or expert weights");
  GCMOE_RETURN_IF_ERROR(check_shared_launch(weights, shared));
  if (num_tokens == 0) {
    return Status();
  }
  MoeLayerConfig const& c = config_;
  int const k = c.top_k;
  // With the step's chain (sync->chain) the four small kernels form a launch chain: each
  // launched while the one before runs, so only their runs are serial, not their launches.
  bool const chained = sync != nullptr && sync->chain;
  RouterShape const rshape{num_tokens, c.hidden, c.num_experts, k};
  GCMOE_RETURN_IF_ERROR(route({.x = x, .gate_weight = weights.gate_weight, .bias = weights.bias},
                              rshape, c.router,
                              {.topk_ids = topk_ids_.data(), .topk_weights = topk_weights_.data()},
                              router_workspace_.data(), router_workspace_.size(), stream, chained));
  // Block size 1: segments are exactly the routed rows (the GEMM needs no padding).
  AlignSortShape const ashape{num_tokens, k, c.num_experts, 1};
  GCMOE_RETURN_IF_ERROR(align_sort(topk_ids_.data(), ashape,
                                   {.sorted_ids = sorted_ids_.data(),
                                    .block_experts = block_experts_.data(),
                                    .expert_offsets = expert_offsets_.data(),
                                    .total_padded = total_padded_.data()},
                                   align_workspace_.data(), align_workspace_.size(), stream,
                                   AlignSortPath::kAuto, chained));
  ActiveExpertsArgs args{.expert_offsets = expert_offsets_.data(),
                         .num_experts = c.num_experts,
                         .num_tokens = num_tokens,
                         .shared_expert = shared_in_routed(weights, shared),
                         .active_experts = active_.data(),
                         .num_active = num_active_.data(),
                         .chained = chained};
  if (sync != nullptr && sync->layout_ready != nullptr) {
    args.layout_ready = sync->layout_ready;
    args.epoch = sync->epoch;
  }
  return compact_active_experts(args, stream);
}

Status MoeLayerSequential::dispatch_routed(float const* x, int num_tokens, cudaStream_t stream,
                                           MoeLayerSync const* sync) {
  GCMOE_RETURN_IF_ERROR(check_tokens(num_tokens));
  if (num_tokens == 0) {
    return Status();
  }
  MoeLayerConfig const& c = config_;
  LocalDispatchArgs args{.x = x,
                         .sorted_ids = sorted_ids_.data(),
                         .num_tokens = num_tokens,
                         .top_k = c.top_k,
                         .hidden = c.hidden,
                         .rows = num_tokens * c.top_k,
                         .recipe = requant_of(c.expert.activation_recipe),
                         .topk_weights = topk_weights_.data(),
                         .xq = xq_.data(),
                         .x_scales = x_scales_.data(),
                         .row_weights = row_weights_.data(),
                         .pair_row = pair_row_.data()};
  if (sync != nullptr) {
    args.ready_rows = sync->ready_rows;
    args.epoch = sync->epoch;
    args.wait_layout = sync->layout_ready;
    args.error = sync->error;
    args.timeout_ns = sync->wait_timeout_ns;
  }
  return local_dispatch(args, stream);
}

Status MoeLayerSequential::dispatch_shared(float const* x, int num_tokens, cudaStream_t stream,
                                           SharedExpertLaunch shared, MoeLayerSync const* sync) {
  GCMOE_RETURN_IF_ERROR(check_tokens(num_tokens));
  if (num_tokens == 0) {
    return Status();
  }
  MoeLayerConfig const& c = config_;
  std::int64_t const base = shared_first_row(num_tokens, shared);
  // Row r is token r, unweighted.
  LocalDispatchArgs args{.x = x,
                         .num_tokens = num_tokens,
                         .top_k = 1,
                         .hidden = c.hidden,
                         .rows = num_tokens,
                         .recipe = requant_of(c.expert.activation_recipe),
                         .xq = xq_.data() + base * c.hidden,
                         .x_scales = x_scales_.data() + base * (c.hidden / 128),
                         // Weight 1 for DeepSeek's weight-before-down when it shares the routed
                         // launches (which read every row's weight).
                         .row_weights = row_weights_.data() + base};
  if (sync != nullptr) {
    args.ready_rows = sync->ready_rows;
    args.ready_row_base = static_cast<int>(base);
    args.epoch = sync->epoch;
  }
  return local_dispatch(args, stream);
}

Status MoeLayerSequential::experts_routed(MoeLayerDeviceWeights const& weights, int num_tokens,
                                          cudaStream_t stream, SharedExpertLaunch shared,
                                          MoeLayerSync const* sync) {
  GCMOE_RETURN_IF_ERROR(check_tokens(num_tokens));
  if (num_tokens == 0) {
    return Status();
  }
  MoeLayerConfig const& c = config_;
  Fp8ExpertGemmArgs select;
  select.expert_offsets = expert_offsets_.data();
  select.active_experts = active_.data();
  select.num_active = num_active_.data();
  bool const with_shared = shared_in_routed(weights, shared);
  select.max_active = std::min(c.num_experts, num_tokens * c.top_k) + (with_shared ? 1 : 0);
  select.rows_per_expert_hint = routed_rows_hint(num_tokens, c.top_k, c.num_experts);
  std::int64_t const used = routed_rows_used(num_tokens, c.top_k, with_shared);
  return launch_expert_ffn(c, routed_experts(weights),
                           rows_from(0, used, c.expert.weight_before_down, sync), select, sync,
                           stream);
}

Status MoeLayerSequential::experts_shared(MoeLayerDeviceWeights const& weights, int num_tokens,
                                          cudaStream_t stream, MoeLayerSync const* sync,
                                          bool alone) {
  GCMOE_RETURN_IF_ERROR(check_tokens(num_tokens));
  GCMOE_CHECK_ARG(weights.has_shared, "the layer's weights have no shared expert");
  if (num_tokens == 0) {
    return Status();
  }
  std::int64_t const first_row = shared_first_row(num_tokens, SharedExpertLaunch::kSeparate);
  SharedExpertSlot const slot = shared_expert_slot(weights, config_.num_experts);
  Fp8ExpertGemmArgs select;
  select.fixed_expert = slot.index;
  select.fixed_rows = num_tokens;
  select.max_active = 1;
  select.rows_per_expert_hint = num_tokens;  // every token
  select.fixed_expert_alone = alone;
  return launch_expert_ffn(config_, slot.set, rows_from(first_row, num_tokens, false, sync), select,
                           sync, stream);
}

ExpertFfnRows MoeLayerSequential::rows_from(std::int64_t first_row, std::int64_t used,
                                            bool weighted, MoeLayerSync const* sync) const {
  MoeLayerConfig const& c = config_;
  bool const by_rows = sync != nullptr && sync->rows_done != nullptr;
  return {.x = xq_.data() + first_row * c.hidden,
          .x_scales = x_scales_.data() + first_row * (c.hidden / 128),
          .route_weights = weighted ? row_weights_.data() + first_row : nullptr,
          .h = h_.data() + first_row * c.intermediate,
          .h_scales = h_scales_.data() + first_row * (c.intermediate / 128),
          .y = y_.data() + first_row * c.hidden,
          .ready_rows = sync != nullptr && sync->ready_rows != nullptr
                            ? sync->ready_rows + first_row
                            : nullptr,
          .rows_done = by_rows ? sync->rows_done + first_row : nullptr,
          .rows_used = used,
          .capacity = static_cast<std::int64_t>(xq_.size()) / c.hidden - first_row};
}

Status MoeLayerSequential::combine(MoeLayerDeviceWeights const& weights, int num_tokens, float* out,
                                   cudaStream_t stream, SharedExpertLaunch shared,
                                   MoeLayerSync const* sync) {
  GCMOE_RETURN_IF_ERROR(check_tokens(num_tokens));
  if (num_tokens == 0) {
    return Status();
  }
  MoeLayerConfig const& c = config_;
  LocalCombineArgs args{
      .y = y_.data(),
      .pair_row = pair_row_.data(),
      .topk_weights = topk_weights_.data(),
      .apply_weights = !c.expert.weight_before_down,
      .shared_y = weights.has_shared ? y_.data() + shared_first_row(num_tokens, shared) * c.hidden
                                     : nullptr,
      .num_tokens = num_tokens,
      .top_k = c.top_k,
      .hidden = c.hidden,
      .out = out,
      .epoch_to_advance = sync != nullptr ? sync->epoch : nullptr,
      // After L2, which lets it start (expert_ffn_launch: the same switch).
      .chained = sync != nullptr && sync->chain};
  if (sync != nullptr && sync->rows_done != nullptr && sync->combine_clears_rows) {
    // The rows the launch pairs counted (experts_routed, experts_shared): the routed pair's from
    // row 0, a shared expert apart from its first row.
    bool const with_routed = shared_in_routed(weights, shared);
    args.clear[0] = sync->rows_done;
    args.clear_rows[0] = static_cast<int>(routed_rows_used(num_tokens, c.top_k, with_routed));
    if (weights.has_shared && !with_routed) {
      args.clear[1] = sync->rows_done + shared_first_row(num_tokens, shared);
      args.clear_rows[1] = num_tokens;
    }
  }
  return local_combine(args, stream);
}

}  // namespace gcmoe::kernels
