#pragma once
// The single-rank halves of a MoE layer around the expert GEMM, for the sequential baseline
// (moe_layer_sequential.h): the dispatch gathers each expert-sorted row's token and quantizes it
// with the model's FP8 activation recipe; the combine sums each token's k expert outputs
// (weighted where the model weights after the expert) plus the shared expert's. Ranks > 1
// exchange rows through the GC-MoE operator instead (issue 6).
// CPU references: formats::quantize_activations, kernels/moe/moe_combine_ref.h.

#include <cuda_runtime.h>

#include <cstdint>

#include "engine/common/status.h"
#include "kernels/moe/fp8_expert_gemm.h"

namespace gcmoe::kernels {

struct LocalDispatchArgs {
  float const* x = nullptr;  // [T, H] fp32, the layer's normalized input
  // Expert-sorted rows: the flat pair index t·k + j of each row (align & sort's sorted_ids; a
  // value ≥ T·k is padding and becomes a zero row). Null: row r is token r (the shared expert).
  std::int32_t const* sorted_ids = nullptr;
  int num_tokens = 0;
  int top_k = 1;
  int hidden = 0;  // a multiple of 128
  int rows = 0;    // rows written: T·k (sorted) or T
  RequantScale recipe = RequantScale::kAmaxOver448;
  float const* topk_weights = nullptr;  // [T·k]; with row_weights, the weight of each row
  std::uint8_t* xq = nullptr;           // [rows, H] e4m3
  float* x_scales = nullptr;            // [rows, H / 128]
  float* row_weights = nullptr;         // optional [rows]; 1 for identity rows
  std::int32_t* pair_row = nullptr;     // optional [T·k]: the row of each pair (for the combine)
  // Token-ring readiness (GC-MoE): once row r is stored, ready_rows[ready_row_base + r] = *epoch
  // (st.release.gpu), so the expert GEMM on the other partition starts on it. Null: no signal.
  int* ready_rows = nullptr;
  int ready_row_base = 0;
  int const* epoch = nullptr;  // device scalar; required with ready_rows or wait_layout
  // Optional: the routing this dispatch reads (sorted_ids, topk_weights) is published by
  // compact_active_experts' layout_ready; each block acquires it (>= *epoch) first, so the
  // dispatch can be launched before the routing finishes, on another partition, with no graph
  // edge. Past timeout_ns it sets *error = 1 and goes on.
  int const* wait_layout = nullptr;
  unsigned* error = nullptr;
  std::uint64_t timeout_ns = 2'000'000'000;
};

Status local_dispatch(LocalDispatchArgs const& args, cudaStream_t stream);

// From align & sort's expert_offsets [E + 1]: the experts with rows (ascending) and their count,
// for the GEMM's active-expert list. With a shared expert (index E, every token once, its rows
// after the routed ones) it also sets expert_offsets[E + 1] = expert_offsets[E] + T and lists E.
struct ActiveExpertsArgs {
  std::int32_t* expert_offsets = nullptr;  // [E + 2] with a shared expert, else [E + 1]
  int num_experts = 0;                     // routed experts, ≤ 1023
  int num_tokens = 0;
  bool shared_expert = false;
  int* active_experts = nullptr;  // [E + 1]
  int* num_active = nullptr;
  // Optional: *layout_ready = *epoch (release) once the list, and the routing before it, is
  // complete (see LocalDispatchArgs::wait_layout).
  int* layout_ready = nullptr;
  int const* epoch = nullptr;
  bool chained = false;  // in a launch chain (hopper::enter_launch_chain)
};

Status compact_active_experts(ActiveExpertsArgs const& args, cudaStream_t stream);

struct LocalCombineArgs {
  std::uint16_t const* y = nullptr;         // [rows, H] bf16: expert outputs per sorted row
  std::int32_t const* pair_row = nullptr;   // [T·k]
  float const* topk_weights = nullptr;      // [T·k]
  bool apply_weights = true;                // GLM-5.2: weight in the combine; DeepSeek: before L2
  std::uint16_t const* shared_y = nullptr;  // optional [T, H] bf16
  int num_tokens = 0;
  int top_k = 1;
  int hidden = 0;
  float* out = nullptr;  // [T, H]: fp32 values of bf16 numbers (moe_combine_ref's rounding)
  // Optional device scalar incremented once, after this layer's last reader of it: the combine is
  // the layer's last kernel, so the next replay's dispatch and GEMM see the next epoch.
  int* epoch_to_advance = nullptr;
  bool chained = false;  // in a launch chain (hopper::enter_launch_chain), after the expert GEMM
  // Optional: L1 -> L2 row counters (MoeLayerSync::rows_done) zeroed for the next run, in place of
  // a clear kernel after each L2 (MoeLayerSync::combine_clears_rows): clear_rows[i] counters from
  // clear[i]. The combine runs after every L2 that reads them.
  int* clear[2] = {nullptr, nullptr};
  int clear_rows[2] = {0, 0};
};

Status local_combine(LocalCombineArgs const& args, cudaStream_t stream);

// Loads the dispatch, active-expert and combine kernels (call before concurrent launches).
Status preload_local_dispatch();

}  // namespace gcmoe::kernels
