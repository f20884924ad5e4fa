#pragma once
// What every expert WGMMA CTA derives first (the FP8 and MXFP4 kernels, with or without a producer
// warp): the expert its slot covers and that expert's rows, and its 1024-byte-aligned stage memory
// (the 128-byte swizzle of the x rows' WGMMA descriptor repeats every 1024 bytes).

#include <cstdint>

#include "kernels/hopper/ptx.cuh"
#include "kernels/moe/fp8_expert_gemm.h"

namespace gcmoe::kernels {

// The expert of this CTA's slot (blockIdx.y) in the active list and its rows [row_begin, row_end).
struct ExpertSlot {
  int expert = 0;
  int row_begin = 0;
  int row_end = 0;
};

// false when the slot has no expert in this launch (the CTA exits).
__device__ __forceinline__ bool active_expert_slot(Fp8ExpertGemmArgs const& args, ExpertSlot& out) {
  int const slot = static_cast<int>(blockIdx.y);
  if (slot >= *args.num_active) {
    return false;
  }
  out.expert = args.active_experts[slot];
  out.row_begin = args.expert_offsets[out.expert];
  out.row_end = args.expert_offsets[out.expert + 1];
  return true;
}

// The first step of every expert WGMMA CTA: lets the next grid launch where the launch allows it
// (programmatic dependent launch: the next kernel may start once every CTA of this one has started
// or exited; it streams its first weight stages and waits for this grid before its x), then finds
// the slot's expert and rows — with kFixedExpert, args.fixed_expert's rows when one is set (the FP8
// kernels' shared-expert mode). false: the slot has no expert in this launch (the CTA exits).
template <bool kFixedExpert>
__device__ __forceinline__ bool begin_expert_cta(Fp8ExpertGemmArgs const& args, ExpertSlot& out) {
  if (args.allow_overlap_next) {
    hopper::launch_dependents();
  }
  if constexpr (kFixedExpert) {
    out = {args.fixed_expert, 0, args.fixed_rows};
    if (out.expert >= 0) {
      return true;
    }
  }
  return active_expert_slot(args, out);
}

// The tile group and the first row of the first pass of CTA `cta` (tile group × `passes` kN-row
// passes side by side); false when that pass starts past the expert's rows (the CTA exits).
template <int kN>
__device__ __forceinline__ bool cta_first_pass_at(ExpertSlot const& slot, int passes, int cta,
                                                  int& group, int& first_pass) {
  group = cta / passes;
  first_pass = slot.row_begin + (cta % passes) * kN;
  return first_pass < slot.row_end;
}
// The same for this CTA, blockIdx.x.
template <int kN>
__device__ __forceinline__ bool cta_first_pass(ExpertSlot const& slot, int passes, int& group,
                                               int& first_pass) {
  return cta_first_pass_at<kN>(slot, passes, static_cast<int>(blockIdx.x), group, first_pass);
}

// Bytes from the start of dynamic shared memory to its first 1024-byte boundary (launches reserve
// 1024 bytes for it).
__device__ __forceinline__ std::uint32_t stage_alignment_pad(unsigned char const* smem_raw) {
  std::uint32_t const address = hopper::smem_address(smem_raw);
  return ((address + 1023u) & ~1023u) - address;
}

}  // namespace gcmoe::kernels
