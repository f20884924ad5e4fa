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

// Bytes from the start of dynamic shared memory to its first 1024-byte boundary (launches reserve
// 1024 bytes for it).
__device__ __forceinline__ std::uint32_t stage_alignment_pad(unsigned char const* smem_raw) {
  std::uint32_t const address = hopper::smem_address(smem_raw);
  return ((address + 1023u) & ~1023u) - address;
}

}  // namespace gcmoe::kernels
