#pragma once
// One MoE layer on one GPU, the sequential baseline (issue 6): router → align & sort → dispatch
// (gather + FP8 quantize) → expert GEMM L1 → L2 → shared expert → combine, all on one stream with
// no host synchronization, so a layer is capturable in a CUDA graph for a fixed token count.
// Semantics: kernels/moe/moe_layer_ref.h (the CPU reference it is tested against).

#include <cuda_runtime.h>

#include <cstdint>

#include "engine/backends/cuda/device_buffer.h"
#include "engine/common/status.h"
#include "kernels/moe/align_sort.h"
#include "kernels/moe/fp8_expert_gemm.h"
#include "kernels/moe/moe_layer_ref.h"
#include "kernels/moe/packed_expert_sections.h"

namespace gcmoe::kernels {

struct ExpertFfnRows;  // expert_ffn_launch.h

// The shared expert is stored as expert E, right after the E routed ones, and runs in the same
// GEMM launches as an expert every token is routed to (so it adds rows, not launches).
struct MoeLayerDeviceWeights {
  float const* gate_weight = nullptr;     // [E, H] fp32
  float const* bias = nullptr;            // [E] or null
  std::uint8_t const* experts = nullptr;  // E (+ 1 shared) packed experts, sections.stride apart
  PackedExpertSections sections;
  bool has_shared = false;  // expert E is the shared expert (same intermediate size)
  // Where the shared expert sits in `experts` when it runs in its own launches; -1: right after
  // the E routed ones. An expert-parallel rank stores only its E/R routed experts, then it.
  int shared_index = -1;
  ExpertWeightFormat format = ExpertWeightFormat::kFp8Block128;  // of the routed experts
  // A shared expert packed apart (else null): DeepSeek's checkpoints store it in FP8 while the
  // routed experts are MXFP4, so with kMxfp4 it is one FP8 expert here with sections of its own,
  // and it runs in launches of its own only (SharedExpertLaunch::kSeparate).
  std::uint8_t const* shared_expert = nullptr;
  PackedExpertSections shared_sections = {};

  bool operator==(MoeLayerDeviceWeights const&) const = default;
};

// Where the shared expert's rows go through the expert GEMM: as expert E in the routed experts'
// launches (its T rows right after the T·k routed ones; one launch pair, so at small T its CTAs
// stream beside the routed ones), or in launches of its own (rows at a fixed place; needs no
// routing, so the GC-MoE graph starts it with the router).
enum class SharedExpertLaunch { kWithRouted, kSeparate };

// INVALID_ARGUMENT for a placement the weights cannot run: the shared expert in the routed launch
// needs it in the routed experts' format and buffer.
Status check_shared_launch(MoeLayerDeviceWeights const& weights, SharedExpertLaunch shared);

// What the GC-MoE operator (gc_moe_layer.h) adds when it places the steps on two partitions:
// the dispatch publishes each row it stores (ready_rows[row] = *epoch, release), the expert GEMM
// acquires them, the combine advances the epoch. All device pointers; ready_rows, layout_ready and
// epoch null where every step is ordered after the one it reads by its stream (no flags).
struct MoeLayerSync {
  int* ready_rows = nullptr;  // [ready_flags()] epoch flags, one per dispatched row
  int* epoch = nullptr;       // scalar; starts at 1, +1 per layer run
  // Routing published by the active-list kernel, acquired by the routed dispatch (which then
  // needs no graph edge from the router).
  int* layout_ready = nullptr;
  unsigned* error = nullptr;  // set to 1 when a GEMM wait times out
  // Programmatic dependent launch in the step: L2 starts while L1 runs.
  bool overlap_down = false;
  // With overlap_down: [ready_flags()] counters, zero between launch pairs, through which each L2
  // acquires its rows from L1 pass by pass (link_rows_done) instead of waiting for L1's whole
  // grid; a kernel after each L2 zeroes its pair's rows, or the combine zeroes every pair's
  // (combine_clears_rows). Null: L2 waits for L1's grid.
  int* rows_done = nullptr;
  // With rows_done: the layer's combine (after every launch pair) zeroes the counters instead of
  // a clear kernel per pair, one graph node fewer each (bench/NOTES.md, twenty-third session).
  bool combine_clears_rows = false;
  // The small kernels' launch chains: the router's kernels, align & sort and the active list, and
  // L2 and the combine (each launched while the one before runs; hopper::enter_launch_chain).
  bool chain = false;
  // The SMs the expert GEMMs' stream may use (the compute partition's), over which an L2 launched
  // by PDL spreads its CTAs (Fp8ExpertGemmArgs::spread_sms); 0: the device's.
  int compute_sms = 0;
  std::uint64_t wait_timeout_ns = 2'000'000'000;  // the GEMM's wait for a row, then *error = 1
  bool system_scope = false;                      // rows are published by other GPUs
};

class MoeLayerSequential {
 public:
  // config: the family's semantics (moe_layer_config with fp8_activations); every buffer for up
  // to max_tokens tokens is allocated here, none per call.
  static StatusOr<MoeLayerSequential> create(MoeLayerConfig const& config, int max_tokens);

  // x: device [T, H] fp32; out: device [T, H] (fp32 values of bf16 numbers). T ≤ max_tokens.
  // The steps below, in order, on one stream.
  Status run(MoeLayerDeviceWeights const& weights, float const* x, int num_tokens, float* out,
             cudaStream_t stream, SharedExpertLaunch shared = SharedExpertLaunch::kWithRouted);

  // The steps of run(), for the GC-MoE operator to place on its partitions. Routed rows: after
  // route_and_sort; the shared expert's (weights.has_shared) need no routing. `sync` connects a
  // dispatch to the GEMM that reads its rows when the two run concurrently. Every step of one
  // layer run takes the same SharedExpertLaunch.
  // 1. router, align & sort, the active-expert list.
  Status route_and_sort(MoeLayerDeviceWeights const& weights, float const* x, int num_tokens,
                        cudaStream_t stream, SharedExpertLaunch shared,
                        MoeLayerSync const* sync = nullptr);
  // 2. gather + FP8 quantization of every expert-sorted row / of each token for the shared expert.
  Status dispatch_routed(float const* x, int num_tokens, cudaStream_t stream,
                         MoeLayerSync const* sync = nullptr);
  Status dispatch_shared(float const* x, int num_tokens, cudaStream_t stream,
                         SharedExpertLaunch shared, MoeLayerSync const* sync = nullptr);
  // 3. L1 (gate/up, SwiGLU, requantization) and L2 (down): every active routed expert (+ the
  // shared one with kWithRouted) / the shared expert alone (kSeparate; expert E of the weights).
  Status experts_routed(MoeLayerDeviceWeights const& weights, int num_tokens, cudaStream_t stream,
                        SharedExpertLaunch shared, MoeLayerSync const* sync = nullptr);
  // alone: nothing runs beside it (Fp8ExpertGemmArgs::fixed_expert_alone); false on a side stream.
  Status experts_shared(MoeLayerDeviceWeights const& weights, int num_tokens, cudaStream_t stream,
                        MoeLayerSync const* sync = nullptr, bool alone = true);
  // 4. weighted sum of each token's expert outputs (+ the shared expert's).
  Status combine(MoeLayerDeviceWeights const& weights, int num_tokens, float* out,
                 cudaStream_t stream, SharedExpertLaunch shared,
                 MoeLayerSync const* sync = nullptr);

  // Readiness flags a MoeLayerSync needs: one per row, max_tokens·(k + 1).
  int ready_flags() const { return max_tokens_ * (config_.top_k + 1); }
  // The shared expert's first row: right after the routed ones (kWithRouted) or after room for
  // max_tokens·k of them (kSeparate, where it does not move with T).
  std::int64_t shared_first_row(int num_tokens, SharedExpertLaunch shared) const;
  int max_tokens() const { return max_tokens_; }

  // The last run's routing, device [T, k].
  std::int32_t const* topk_ids() const { return topk_ids_.data(); }
  // The last route_and_sort's results, for expert parallelism (ep_moe_rank.h): the pairs in
  // expert order, each expert's first pair (all E experts) and the routing weights.
  std::int32_t const* sorted_ids() const { return sorted_ids_.data(); }
  std::int32_t const* expert_offsets() const { return expert_offsets_.data(); }
  float const* topk_weights() const { return topk_weights_.data(); }
  // The shared expert's output rows [T, H] bf16 after experts_shared.
  std::uint16_t const* shared_output() const {
    return y_.data() + shared_first_row(0, SharedExpertLaunch::kSeparate) * config_.hidden;
  }
  MoeLayerConfig const& config() const { return config_; }

 private:
  MoeLayerSequential() = default;
  Status check_tokens(int num_tokens) const;
  // The expert FFN's rows from first_row (0: routed, else the shared expert's), of which the
  // launch pair uses `used` (the rows of its L1 -> L2 counters it zeroes).
  ExpertFfnRows rows_from(std::int64_t first_row, std::int64_t used, bool weighted,
                          MoeLayerSync const* sync) const;

  MoeLayerConfig config_;
  int max_tokens_ = 0;
  cuda::DeviceBuffer<std::byte> router_workspace_, align_workspace_;
  cuda::DeviceBuffer<std::int32_t> topk_ids_, sorted_ids_, block_experts_, expert_offsets_,
      total_padded_, pair_row_;
  // Rows: T·k routed rows (expert-sorted) from 0, the shared expert's T rows (token order) from
  // shared_first_row().
  cuda::DeviceBuffer<float> topk_weights_, x_scales_, row_weights_, h_scales_;
  cuda::DeviceBuffer<std::uint8_t> xq_, h_;
  cuda::DeviceBuffer<std::uint16_t> y_;
  cuda::DeviceBuffer<int> active_, num_active_;
};

}  // namespace gcmoe::kernels
