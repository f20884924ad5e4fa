#include "kernels/moe/expert_ffn_launch.h"

#include <cstdint>

#include "engine/common/check.h"
#include "kernels/moe/expert_rows_clear.h"
#include "kernels/moe/expert_rows_handshake.h"
#include "kernels/moe/fp8_expert_wgmma.h"
#include "kernels/moe/mxfp4_expert_wgmma.h"

namespace gcmoe::kernels {

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

ExpertSet routed_experts(MoeLayerDeviceWeights const& weights) {
  return {.format = weights.format, .base = weights.experts, .sections = weights.sections};
}

SharedExpertSlot shared_expert_slot(MoeLayerDeviceWeights const& weights, int routed) {
  if (weights.shared_expert != nullptr) {
    return {.set = {.format = ExpertWeightFormat::kFp8Block128,
                    .base = weights.shared_expert,
                    .sections = weights.shared_sections},
            .index = 0};
  }
  return {.set = routed_experts(weights),
          .index = weights.shared_index >= 0 ? weights.shared_index : routed};
}

Status launch_expert_ffn(MoeLayerConfig const& c, ExpertSet const& experts,
                         ExpertFfnRows const& rows, Fp8ExpertGemmArgs const& select,
                         MoeLayerSync const* sync, cudaStream_t stream) {
  GCMOE_CHECK_ARG(sync == nullptr || sync->ready_rows == nullptr || rows.ready_rows != nullptr,
                  "expert ffn: readiness needs the rows' flags");
  // L2 acquiring L1's rows needs L2 launched by PDL (the overlap it exists for) and the rows the
  // clear after it zeroes.
  bool const by_rows = rows.rows_done != nullptr;
  GCMOE_CHECK_ARG(!by_rows || (sync != nullptr && sync->overlap_down && sync->error != nullptr &&
                               rows.rows_used > 0 && rows.rows_used <= INT32_MAX),
                  "expert ffn: L2 by rows needs L2 launched by PDL, an error flag and 1 to 2^31 "
                  "rows to clear ({})",
                  rows.rows_used);
  bool const mxfp4 = experts.format == ExpertWeightFormat::kMxfp4;
  PackedExpertSections const& sections = experts.sections;
  auto const launch = [&](Fp8ExpertGemmArgs const& args) {
    return mxfp4 ? launch_mxfp4_expert_wgmma(args, stream) : launch_fp8_expert_wgmma(args, stream);
  };
  Fp8ExpertGemmArgs l1;
  l1.expert_offsets = select.expert_offsets;
  l1.active_experts = select.active_experts;
  l1.num_active = select.num_active;
  l1.max_active = select.max_active;
  l1.rows_per_expert_hint = select.rows_per_expert_hint;
  l1.fixed_expert = select.fixed_expert;
  l1.fixed_rows = select.fixed_rows;
  l1.fixed_expert_alone = select.fixed_expert_alone;
  l1.stage = ExpertGemmStage::kGateUp;
  l1.weights = experts.base + sections.l1_codes;
  l1.weight_scales = reinterpret_cast<float const*>(experts.base + sections.l1_scales);
  l1.weight_stride = sections.stride;
  l1.scale_stride = sections.stride / static_cast<std::int64_t>(sizeof(float));
  l1.tiles = c.intermediate / 8;
  l1.chunks = c.hidden / 128;
  l1.x = rows.x;
  l1.x_scales = rows.x_scales;
  l1.x_rows = rows.capacity;
  l1.requant = requant_of(c.expert.activation_recipe);
  l1.swiglu_limit = c.expert.swiglu_limit;
  l1.route_weights = rows.route_weights;
  l1.h = rows.h;
  l1.h_scales = rows.h_scales;
  if (sync != nullptr) {
    l1.ready_blocks = rows.ready_rows;
    l1.ready_block_rows = 1;
    l1.ready_epoch_device = sync->epoch;
    l1.error = sync->error;
    l1.ready_timeout_ns = sync->wait_timeout_ns;
    l1.ready_system_scope = sync->system_scope;
    l1.allow_overlap_next = sync->overlap_down;
  }
  Fp8ExpertGemmArgs l2 = l1;
  l2.stage = ExpertGemmStage::kDown;
  l2.weights = experts.base + sections.l2_codes;
  l2.weight_scales = reinterpret_cast<float const*>(experts.base + sections.l2_scales);
  l2.tiles = c.hidden / 16;
  l2.chunks = c.intermediate / 128;
  l2.x = rows.h;
  l2.x_scales = rows.h_scales;
  l2.x_rows = rows.capacity;
  l2.h = nullptr;
  l2.h_scales = nullptr;
  l2.route_weights = nullptr;
  l2.y = rows.y;
  // L1 wrote every row L2 reads: no readiness to wait for, only L1 itself.
  l2.ready_blocks = nullptr;
  l2.ready_epoch_device = nullptr;
  // With the chain the combine after L2 is chained to it (MoeLayerSync::chain).
  l2.allow_overlap_next = sync != nullptr && sync->chain;
  l2.overlap_previous = sync != nullptr && sync->overlap_down;
  l2.spread_sms = sync != nullptr ? sync->compute_sms : 0;
  bool const clear_after = by_rows && !sync->combine_clears_rows;
  if (by_rows) {
    GCMOE_RETURN_IF_ERROR(link_rows_done(l1, l2, rows.rows_done, sync->error));
  }
  if (clear_after) {
    l2.allow_overlap_next = true;  // the clear after it starts early
  }
  GCMOE_RETURN_IF_ERROR(launch(l1));
  GCMOE_RETURN_IF_ERROR(launch(l2));
  if (clear_after) {
    // Launched by PDL once L2 lets it (above); it lets the combine after it start.
    GCMOE_RETURN_IF_ERROR(launch_clear_rows_done(rows.rows_done, static_cast<int>(rows.rows_used),
                                                 /*overlap_previous=*/true, stream));
  }
  return Status();
}

}  // namespace gcmoe::kernels
