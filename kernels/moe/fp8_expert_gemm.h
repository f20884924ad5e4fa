#pragma once
// GC-MoE compute-partition kernel, version 1: the FP8×FP8 expert FFN for decode batches with
// 128×128 f32 weight scales (GLM-5.2-FP8), swap-AB on `mma.sync` m16n8k32 e4m3 (weights on M,
// tokens on N). One launch per projection:
//   kGateUp: h = SwiGLU(x·Wgateᵀ, x·Wupᵀ) [× routing weight], requantized to FP8 per 128 outputs;
//   kDown:   y = h·Wdownᵀ in bf16, one row per (token, expert) slot.
// Weights come packed by kernels/moe/fp8_expert_layout.h. Activation rows are grouped by expert
// (expert_offsets); a CTA owns the weight tiles of one active expert (L1: 16 tiles = 128 outputs,
// one requantization group; L2: 8 tiles), each warp streaming its tile through a cp.async ring in
// shared memory, once for up to 8 or 32 of the expert's rows (more rows: more passes). The x rows
// (B operand) are read from global memory: they are small and stay in L1/L2.
// CPU reference: kernels/moe/expert_ffn_ref.h.

#include <cuda_runtime.h>

#include <cstdint>

#include "engine/common/status.h"

namespace gcmoe::kernels {

enum class ExpertGemmStage { kGateUp, kDown };

// How h is requantized for L2: power-of-two scales (DeepSeek ue8m0) or amax/448 (GLM-5.2).
enum class RequantScale { kPow2, kAmaxOver448 };

// Tiles per expert must be a multiple of this (L1 CTAs own 16 tiles = 128 outputs).
inline constexpr int kExpertGemmWarps = 16;
inline constexpr int kExpertGemmMaxPassRows = 32;  // rows (slots) per weight pass, at most
// The largest rows_per_expert_hint the WGMMA launchers (FP8 and MXFP4) accept.
inline constexpr int kExpertGemmMaxRowsHint = 1 << 20;

struct Fp8ExpertGemmArgs {
  ExpertGemmStage stage = ExpertGemmStage::kGateUp;
  // Packed weights of all experts, expert e at e * weight_stride bytes / e * scale_stride floats.
  std::uint8_t const* weights = nullptr;
  float const* weight_scales = nullptr;
  std::int64_t weight_stride = 0;
  std::int64_t scale_stride = 0;
  int tiles = 0;   // per expert; a multiple of kExpertGemmWarps
  int chunks = 0;  // K / 128
  // Inputs: FP8 rows [rows, K] and their per-128 scales [rows, chunks], grouped by expert.
  std::uint8_t const* x = nullptr;
  float const* x_scales = nullptr;
  // Rows the x buffer holds from `x` on (0: unknown). The MXFP4 kernel then loads each stage's x
  // rows with one TMA tensor copy (the bound zero-fills rows past the buffer) instead of cp.async.
  std::int64_t x_rows = 0;
  int const* expert_offsets = nullptr;  // device [experts + 1]
  int const* active_experts = nullptr;  // device [max_active]: experts with rows
  int const* num_active = nullptr;      // device scalar
  int max_active = 0;                   // grid bound (host)
  // WGMMA version only: one expert known on the host (the shared expert) over rows
  // [0, fixed_rows) — no offsets or active list to read, so its launch need not wait for routing.
  int fixed_expert = -1;
  int fixed_rows = 0;
  // A fixed expert's launch has the GPU to itself (nothing runs beside it), so it may spread its K
  // chunks over clusters of CTAs (fp8_expert_wgmma.h); false where it runs beside other work (the
  // GC-MoE step's side stream), whose SMs the extra CTAs would take.
  bool fixed_expert_alone = true;
  // Expected most rows of one expert (decode: tokens per rank). ≤ 8 picks the decode
  // configuration (one 8-row group, deeper weight pipeline); more rows than the hint stay
  // correct, they take more passes over the weights.
  int rows_per_expert_hint = kExpertGemmMaxPassRows;
  // kGateUp outputs: h [rows, tiles * 8] FP8 and scales [rows, tiles / 16].
  std::uint8_t* h = nullptr;
  float* h_scales = nullptr;
  RequantScale requant = RequantScale::kAmaxOver448;
  float swiglu_limit = 0.0f;             // 0: no clamp (GLM-5.2); DeepSeek 10
  float const* route_weights = nullptr;  // optional [rows]: h *= weight before requantization
  // kDown output: y [rows, tiles * 16] bf16 bits.
  std::uint16_t* y = nullptr;
  // Token-ring readiness (WGMMA version only; null: every row is ready). Rows are grouped in ring
  // blocks of ready_block_rows; the kernel reads block b's rows once ready_blocks[b] >=
  // ready_epoch (acquire), after starting the weight stream. Counters only grow, so successive
  // replays use successive epochs and nothing is reset between them. A block not ready within
  // ready_timeout_ns sets *error to 1 and the kernel goes on (its output is then garbage).
  int const* ready_blocks = nullptr;
  int ready_block_rows = 0;
  int ready_epoch = 1;
  // Device scalar read at kernel start in place of ready_epoch: a replayed CUDA graph's epoch
  // advances on the device (the layer's last kernel bumps it), so no node is re-parameterized.
  int const* ready_epoch_device = nullptr;
  bool ready_system_scope = false;                 // the counters are released by another GPU
  std::uint64_t ready_timeout_ns = 2'000'000'000;  // 2 s
  unsigned* error = nullptr;
  // Programmatic dependent launch (WGMMA version only). overlap_previous: launched so it may start
  // while the previous kernel in the stream still runs; its producer streams the first weight
  // stages, then waits for that kernel (griddepcontrol.wait) before reading x. Everything else it
  // reads must come from earlier kernels. allow_overlap_next: lets such a next kernel start once
  // every CTA of this one is resident.
  bool overlap_previous = false;
  bool allow_overlap_next = false;
  // L1 -> L2 by rows (WGMMA versions; bench/NOTES.md, twenty-first session). On L1, rows_done
  // ([rows], zero at the launch): once a pass's h columns and scales are stored, each tile group
  // adds one to rows_done[row] for the pass's rows (release). On an L2 launched with
  // overlap_previous: ready_blocks = rows_done (ready_block_rows 1), ready_epoch = L1's tile groups
  // (I / 128) and x_ready_by_rows, so it acquires each pass's rows there instead of waiting for the
  // whole L1 grid (griddepcontrol.wait) and its first CTAs run in the SMs L1's last wave leaves
  // idle. The counters must be zeroed again after L2 (ExpertRowsHandshake).
  int* rows_done = nullptr;
  bool x_ready_by_rows = false;
  // With overlap_previous: the SMs the launch's stream may use (its green context's compute
  // partition), over which a grid smaller than its full packing is spread
  // (expert_pass_policy.h, pdl_spread_smem_bytes). 0: the device's; < 0: packed as the block
  // scheduler places it (an ablation for the benchmarks).
  int spread_sms = 0;
  // Persistent CTAs (the MXFP4 kernel with feed warps; bench/NOTES.md, twenty-seventh session):
  // two ints, zero at the launch. Set, the launch holds one CTA per place its SMs (spread_sms, else
  // the device's) have for it, and each takes (expert, tile group, pass) work items from
  // work_counters[0] until none is left, its stage ring carried from one item to the next
  // (kernels/moe/expert_work_queue.cuh); the grid's last CTA zeroes both again before it lets the
  // next kernel launch. Launches that may run at the same time need counters of their own. Null:
  // one CTA per work item. The FP8 launchers refuse it.
  int* work_counters = nullptr;
};

// Loads both kernel instantiations and raises their shared-memory limit; call before any
// concurrent launch (lazy loading under a spinning kernel deadlocks).
Status preload_fp8_expert_gemm();

// The checks every version makes: required pointers, the stage's outputs, K, readiness fields.
Status check_expert_gemm_args(Fp8ExpertGemmArgs const& args);

Status launch_fp8_expert_gemm(Fp8ExpertGemmArgs const& args, cudaStream_t stream);

}  // namespace gcmoe::kernels
