#pragma once
// How the expert WGMMA kernels' feed warps copy a pass's x rows and their activation scales for
// one chunk into a stage with cp.async (fp8_expert_wgmma_kernel.cuh,
// mxfp4_expert_wgmma_kernel.cuh): the rows as the consumers' WGMMA descriptor reads them — 128-byte
// rows whose 16-byte units are swizzled by the row's low three bits — and rows past the pass's
// `rows` zero-filled without a read. One warp; every lane issues its share, the caller arrives on
// the stage's barrier.

#include <cstdint>

#include "kernels/hopper/ptx.cuh"

namespace gcmoe::kernels {

// Bytes of one x row per chunk (the kernels' K per chunk, FP8).
inline constexpr int kXChunkRowBytes = 128;

// x: [rows of the buffer, k_total] FP8 bytes; chunk c's 128 bytes of rows pass .. pass + kN - 1
// to x_stage (shared address).
template <int kN>
__device__ __forceinline__ void copy_x_rows(std::uint32_t x_stage, std::uint8_t const* x,
                                            std::int64_t k_total, int pass, int rows, int c,
                                            int lane) {
  // Unrolled at most twice: wider unrolling spills at the 8-row configurations' register caps.
#pragma unroll(kN <= 8 ? 1 : 2)
  for (int u = lane; u < kN * 8; u += 32) {
    int const r = u / 8;
    int const unit = u % 8;
    std::uint32_t const dst = x_stage + r * kXChunkRowBytes + ((unit ^ (r & 7)) << 4);
    bool const present = r < rows;
    std::uint8_t const* src =
        present ? x + (pass + r) * k_total + c * kXChunkRowBytes + unit * 16 : x;
    hopper::copy_16_zfill(dst, src, present ? 16u : 0u);
  }
}

// x_scales: [rows of the buffer, chunks] f32; chunk c's scales of the pass's rows to
// stage_scales[0 .. kN) (zeros past the rows).
template <int kN>
__device__ __forceinline__ void copy_x_scales(float* stage_scales, float const* x_scales,
                                              int chunks, int pass, int rows, int c, int lane) {
  for (int r = lane; r < kN; r += 32) {
    bool const present = r < rows;
    float const* src =
        present ? x_scales + (pass + r) * static_cast<std::int64_t>(chunks) + c : x_scales;
    hopper::copy_4_zfill(hopper::smem_address(stage_scales + r), src, present ? 4u : 0u);
  }
}

}  // namespace gcmoe::kernels
