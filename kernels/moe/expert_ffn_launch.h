#pragma once
// One launch pair of the WGMMA expert FFN (L1 gate/up + SwiGLU + requantization, then L2 down)
// over a set of rows, with a MoE layer's packed weights: what the single-rank layer
// (moe_layer_sequential.h) and an expert-parallel rank (ep_moe_rank.h) both run.

#include <cuda_runtime.h>

#include <cstdint>

#include "engine/common/status.h"
#include "engine/formats/activation_quant.h"
#include "kernels/moe/fp8_expert_gemm.h"
#include "kernels/moe/moe_layer_sequential.h"

namespace gcmoe::kernels {

// How h is requantized for L2 under the model's activation recipe.
RequantScale requant_of(formats::ActivationRecipe recipe);

// Where the launch pair's rows live (device pointers, row 0 of this launch).
struct ExpertFfnRows {
  std::uint8_t const* x = nullptr;       // [rows, H] e4m3
  float const* x_scales = nullptr;       // [rows, H / 128]
  float const* route_weights = nullptr;  // optional [rows]: h *= weight (DeepSeek, before L2)
  std::uint8_t* h = nullptr;             // [rows, I] e4m3
  float* h_scales = nullptr;             // [rows, I / 128]
  std::uint16_t* y = nullptr;            // [rows, H] bf16
  int const* ready_rows = nullptr;       // with sync: per-row epoch flags L1 acquires
  // With sync->overlap_down: L1 -> L2 counters per row (MoeLayerSync::rows_done), of which the
  // first rows_used are zeroed after L2 (at least the rows the pair reaches). Null: L2 waits for
  // L1's grid.
  int* rows_done = nullptr;
  std::int64_t rows_used = 0;
  // Rows x, h and y hold from these pointers: the bound of the x rows' TMA maps. 0 (unknown) only
  // for FP8 experts; the MXFP4 kernels load x by TMA alone and refuse it.
  std::int64_t capacity = 0;
};

// Packed experts of one format: expert i at base + i · sections.stride.
struct ExpertSet {
  ExpertWeightFormat format = ExpertWeightFormat::kFp8Block128;
  std::uint8_t const* base = nullptr;
  PackedExpertSections sections;
};

// The routed experts (index = the layer's or the rank's local expert index).
ExpertSet routed_experts(MoeLayerDeviceWeights const& weights);
// The shared expert's set and its index there (`routed`: experts the layer holds, E or E/R).
struct SharedExpertSlot {
  ExpertSet set;
  int index = 0;
};
SharedExpertSlot shared_expert_slot(MoeLayerDeviceWeights const& weights, int routed);

// `select` names the experts: expert_offsets / active_experts / num_active / max_active /
// rows_per_expert_hint, or fixed_expert / fixed_rows (FP8 only); its other fields are ignored.
Status launch_expert_ffn(MoeLayerConfig const& config, ExpertSet const& experts,
                         ExpertFfnRows const& rows, Fp8ExpertGemmArgs const& select,
                         MoeLayerSync const* sync, cudaStream_t stream);

}  // namespace gcmoe::kernels
