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
#include "kernels/moe/moe_layer_ref.h"

namespace gcmoe::kernels {

// Where one packed expert's sections sit (bytes from the expert's start; the expert's stride):
// the WGMMA layout (fp8_expert_wgmma_layout.h), as model::GlmFp8PackedLayout makes at load time.
struct PackedExpertSections {
  std::int64_t l1_codes = 0;
  std::int64_t l1_scales = 0;  // f32; 4-byte aligned
  std::int64_t l2_codes = 0;
  std::int64_t l2_scales = 0;
  std::int64_t stride = 0;  // bytes from one expert to the next; a multiple of 16
};

// The shared expert is stored as expert E, right after the E routed ones, and runs in the same
// GEMM launches as an expert every token is routed to (so it adds rows, not launches).
struct MoeLayerDeviceWeights {
  float const* gate_weight = nullptr;     // [E, H] fp32
  float const* bias = nullptr;            // [E] or null
  std::uint8_t const* experts = nullptr;  // E (+ 1 shared) packed experts, sections.stride apart
  PackedExpertSections sections;
  bool has_shared = false;  // expert E is the shared expert (same intermediate size)
};

class MoeLayerSequential {
 public:
  // config: the family's semantics (moe_layer_config with fp8_activations); every buffer for up
  // to max_tokens tokens is allocated here, none per call.
  static StatusOr<MoeLayerSequential> create(MoeLayerConfig const& config, int max_tokens);

  // x: device [T, H] fp32; out: device [T, H] (fp32 values of bf16 numbers). T ≤ max_tokens.
  Status run(MoeLayerDeviceWeights const& weights, float const* x, int num_tokens, float* out,
             cudaStream_t stream);

  // The last run's routing, device [T, k].
  std::int32_t const* topk_ids() const { return topk_ids_.data(); }

 private:
  MoeLayerSequential() = default;

  MoeLayerConfig config_;
  int max_tokens_ = 0;
  cuda::DeviceBuffer<std::byte> router_workspace_, align_workspace_;
  cuda::DeviceBuffer<std::int32_t> topk_ids_, sorted_ids_, block_experts_, expert_offsets_,
      total_padded_, pair_row_;
  // Rows: T·k routed rows (expert-sorted), then T shared-expert rows (token order).
  cuda::DeviceBuffer<float> topk_weights_, x_scales_, row_weights_, h_scales_;
  cuda::DeviceBuffer<std::uint8_t> xq_, h_;
  cuda::DeviceBuffer<std::uint16_t> y_;
  cuda::DeviceBuffer<int> active_, num_active_;
};

}  // namespace gcmoe::kernels
