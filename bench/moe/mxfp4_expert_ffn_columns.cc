#include "bench/moe/mxfp4_expert_ffn_columns.h"

#include <algorithm>

#include "engine/common/check.h"
#include "kernels/moe/mxfp4_expert_wgmma.h"
#include "kernels/moe/mxfp4_expert_wgmma_layout.h"

namespace gcmoe::bench::mxfp4_ffn {
namespace {

using kernels::Fp8ExpertGemmArgs;

kernels::Mxfp4WgmmaTuning tuning_for(Kernel kernel) {
  kernels::Mxfp4WgmmaTuning t;  // the default: what launch_mxfp4_expert_wgmma(args, stream) runs
  switch (kernel) {
    case Kernel::kMxfp4:
      break;
    case Kernel::kOnePass:
      t.max_passes = 1;
      break;
    case Kernel::kNarrow16:
      t.pass_rows = 16;
      break;
    case Kernel::kNarrow32:
      t.pass_rows = 32;
      break;
    case Kernel::kNarrow48:
      t.pass_rows = 48;
      break;
    case Kernel::kDownNarrow16:
    case Kernel::kDownNarrow32:
    case Kernel::kDownNarrow48:
      break;  // L1 as the default; L2: down_tuning_for
    case Kernel::kStreamOnly:
    case Kernel::kStreamOnlyPersistent:
      t.stream_only = true;
      break;
    case Kernel::kPersistent:
    case Kernel::kPersistentPdl:
    case Kernel::kPdlL1Persistent:
    case Kernel::kPdlL2Persistent:
      break;
    case Kernel::kPdl:
    case Kernel::kPdlUntriggered:
    case Kernel::kPdlPacked:
    case Kernel::kPdlRows:
      break;
    case Kernel::kAgain:
      break;
  }
  return t;
}

// L2's tuning: the column's, but for the columns that force L2 alone.
kernels::Mxfp4WgmmaTuning down_tuning_for(Kernel kernel) {
  kernels::Mxfp4WgmmaTuning t = tuning_for(kernel);
  if (kernel == Kernel::kDownNarrow16) {
    t.pass_rows = 16;
  } else if (kernel == Kernel::kDownNarrow32) {
    t.pass_rows = 32;
  } else if (kernel == Kernel::kDownNarrow48) {
    t.pass_rows = 48;
  }
  return t;
}

}  // namespace

char const* kernel_name(Kernel kernel) {
  switch (kernel) {
    case Kernel::kMxfp4:
      return "mxfp4";
    case Kernel::kOnePass:
      return "mxfp4_one_pass";
    case Kernel::kNarrow16:
      return "mxfp4_feed16";
    case Kernel::kNarrow32:
      return "mxfp4_feed32";
    case Kernel::kNarrow48:
      return "mxfp4_feed48";
    case Kernel::kDownNarrow16:
      return "mxfp4_down_feed16";
    case Kernel::kDownNarrow32:
      return "mxfp4_down_feed32";
    case Kernel::kDownNarrow48:
      return "mxfp4_down_feed48";
    case Kernel::kStreamOnly:
      return "stream_only";
    case Kernel::kPdl:
      return "mxfp4_pdl";
    case Kernel::kPdlUntriggered:
      return "mxfp4_pdl_untriggered";
    case Kernel::kPdlPacked:
      return "mxfp4_pdl_packed";
    case Kernel::kPdlRows:
      return "mxfp4_pdl_rows";
    case Kernel::kPersistent:
      return "mxfp4_persistent";
    case Kernel::kPersistentPdl:
      return "mxfp4_persistent_pdl";
    case Kernel::kStreamOnlyPersistent:
      return "stream_only_persistent";
    case Kernel::kPdlL1Persistent:
      return "mxfp4_pdl_l1_persistent";
    case Kernel::kPdlL2Persistent:
      return "mxfp4_pdl_l2_persistent";
    case Kernel::kAgain:
      return "mxfp4_again";
  }
  return "?";
}

Status launch_ffn(Kernel kernel, Weights const& w, Batch const& b,
                  kernels::ExpertRowsHandshake const& rows, int* work_counters,
                  cudaStream_t stream) {
  Fp8ExpertGemmArgs a;
  a.stage = kernels::ExpertGemmStage::kGateUp;
  a.weights = w.l1.data();
  a.weight_scales = reinterpret_cast<float const*>(w.l1_scales.data());
  a.weight_stride = w.l1_stride();
  a.scale_stride = w.l1_scale_stride();
  a.tiles = static_cast<int>(kInter / 8);
  a.chunks = static_cast<int>(kHidden / 128);
  a.x = b.x.data();
  // The x rows' bound for the tensor map (every MXFP4 kernel loads x by TMA since v5.14).
  a.x_rows = std::max(b.rows, 1);
  a.x_scales = b.x_scales.data();
  a.expert_offsets = b.offsets.data();
  a.active_experts = b.active_experts.data();
  a.num_active = b.num_active.data();
  a.max_active = b.active;
  a.rows_per_expert_hint = b.rows_hint;
  a.h = b.h.data();
  a.h_scales = b.h_scales.data();
  a.requant = kernels::RequantScale::kPow2;
  a.swiglu_limit = 10.0f;
  a.route_weights = b.route.data();
  bool const by_rows = kernel == Kernel::kPdlRows;
  bool const persistent = kernel == Kernel::kPersistent || kernel == Kernel::kPersistentPdl ||
                          kernel == Kernel::kStreamOnlyPersistent;
  bool const l1_only = kernel == Kernel::kPdlL1Persistent;
  bool const l2_only = kernel == Kernel::kPdlL2Persistent;
  bool const pdl = kernel == Kernel::kPdl || kernel == Kernel::kPdlUntriggered ||
                   kernel == Kernel::kPdlPacked || kernel == Kernel::kPersistentPdl || l1_only ||
                   l2_only || by_rows;
  a.allow_overlap_next = kernel == Kernel::kPdl || kernel == Kernel::kPdlPacked ||
                         kernel == Kernel::kPersistentPdl || l1_only || l2_only || by_rows;
  a.work_counters = persistent || l1_only ? work_counters : nullptr;
  Fp8ExpertGemmArgs d = a;
  d.stage = kernels::ExpertGemmStage::kDown;
  d.weights = w.l2.data();
  d.weight_scales = reinterpret_cast<float const*>(w.l2_scales.data());
  d.weight_stride = w.l2_stride();
  d.scale_stride = w.l2_scale_stride();
  d.tiles = static_cast<int>(kHidden / 16);
  d.chunks = static_cast<int>(kInter / 128);
  d.x = b.h.data();
  d.x_scales = b.h_scales.data();
  d.y = b.y.data();
  d.allow_overlap_next = false;
  d.overlap_previous = pdl;
  d.spread_sms = kernel == Kernel::kPdlPacked ? -1 : 0;
  d.work_counters = persistent || l2_only ? work_counters + 2 : nullptr;
  if (by_rows) {
    GCMOE_RETURN_IF_ERROR(rows.apply(a, d, b.rows));
  }
  GCMOE_RETURN_IF_ERROR(kernels::launch_mxfp4_expert_wgmma(a, stream, tuning_for(kernel)));
  GCMOE_RETURN_IF_ERROR(kernels::launch_mxfp4_expert_wgmma(d, stream, down_tuning_for(kernel)));
  return by_rows ? rows.finish(stream) : Status();
}

}  // namespace gcmoe::bench::mxfp4_ffn
