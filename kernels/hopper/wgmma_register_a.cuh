#pragma once
// FP8 WGMMA with the A operand in registers (m64nNk32, e4m3 × e4m3 -> f32): A is 64×32 e4m3
// spread over the warpgroup as 4 × .b32 per thread (PTX ISA "Register fragment for matrix A",
// 8-bit types: warp w, lane 4g + t holds rows 16w+g (a0, a2) and 16w+g+8 (a1, a3), bytes
// k = 4t..4t+3 (a0, a1) and 16+4t..16+4t+3 (a2, a3)); B N×32 K-major in shared memory (descriptor,
// 128-byte swizzle: hopper::smem_desc_sw128). Call hopper::wgmma_fence() after writing the A
// registers (or the accumulators) and before the instruction; the A registers must stay unchanged
// until the wgmma_wait that covers it. Widths 8-32 and, for the MXFP4 kernel's 48-row passes
// trimmed to their rows, 40 and 48.

#include <cstdint>

namespace gcmoe::kernels::hopper {

// Pins a register-A fragment in place before wgmma_fence(): without it the compiler may compute
// the fragment's last instructions after the fence, next to the WGMMA, and ptxas then serializes
// every WGMMA of the kernel (C7520, "compiler-inserted WG.AR").
__device__ __forceinline__ void fence_fragment(std::uint32_t (&a)[4]) {
  asm volatile("" : "+r"(a[0]), "+r"(a[1]), "+r"(a[2]), "+r"(a[3])::"memory");
}

template <int kN>
struct WgmmaFp8RegA;

template <>
struct WgmmaFp8RegA<8> {
  __device__ __forceinline__ static void run(float (&d)[4], std::uint32_t const (&a)[4],
                                             std::uint64_t desc_b, bool accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %9, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, %8, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b),
          "r"(static_cast<int>(accumulate)));
  }
};

template <>
struct WgmmaFp8RegA<16> {
  __device__ __forceinline__ static void run(float (&d)[8], std::uint32_t const (&a)[4],
                                             std::uint64_t desc_b, bool accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %13, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e4m3 "
        "{%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, %12, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b),
          "r"(static_cast<int>(accumulate)));
  }
};

template <>
struct WgmmaFp8RegA<24> {
  __device__ __forceinline__ static void run(float (&d)[12], std::uint32_t const (&a)[4],
                                             std::uint64_t desc_b, bool accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %17, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n24k32.f32.e4m3.e4m3 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11}, {%12, %13, %14, %15}, %16, p, 1, "
        "1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b),
          "r"(static_cast<int>(accumulate)));
  }
};

template <>
struct WgmmaFp8RegA<32> {
  __device__ __forceinline__ static void run(float (&d)[16], std::uint32_t const (&a)[4],
                                             std::uint64_t desc_b, bool accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n32k32.f32.e4m3.e4m3 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "
        "{%16, %17, %18, %19}, %20, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
          "+f"(d[14]), "+f"(d[15])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b),
          "r"(static_cast<int>(accumulate)));
  }
};

template <>
struct WgmmaFp8RegA<40> {
  __device__ __forceinline__ static void run(float (&d)[20], std::uint32_t const (&a)[4],
                                             std::uint64_t desc_b, bool accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %25, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n40k32.f32.e4m3.e4m3 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
        "%19}, "
        "{%20, %21, %22, %23}, %24, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
          "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b),
          "r"(static_cast<int>(accumulate)));
  }
};

template <>
struct WgmmaFp8RegA<48> {
  __device__ __forceinline__ static void run(float (&d)[24], std::uint32_t const (&a)[4],
                                             std::uint64_t desc_b, bool accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %29, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n48k32.f32.e4m3.e4m3 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
        "%19, %20, %21, %22, %23}, "
        "{%24, %25, %26, %27}, %28, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
          "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
          "+f"(d[21]), "+f"(d[22]), "+f"(d[23])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b),
          "r"(static_cast<int>(accumulate)));
  }
};

}  // namespace gcmoe::kernels::hopper
