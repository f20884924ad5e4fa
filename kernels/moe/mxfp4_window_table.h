#pragma once
// The MXFP4 kernel's windowed decode table (layout: mxfp4_expert_wgmma_layout.h, version 6): for
// each window step d = 0..kMxWindowSteps-1, the 8 e4m3 bytes of the e2m1 magnitudes
// {0, 0.5, 1, 1.5, 2, 3, 4, 6} times 2^(6 - d), every one exact (d = 14 reaches e4m3's smallest
// subnormal 2^-9). The kernel builds it in shared memory and picks an entry per (row, k-step) by
// byte permute; the CPU twin and the layout's tests read the same bytes. Host and device.

#include <cstdint>

#if defined(__CUDACC__)
#define GCMOE_MX_HOST_DEVICE __host__ __device__
#else
#define GCMOE_MX_HOST_DEVICE
#endif

namespace gcmoe::kernels {

// Window steps below a row's largest block exponent that decode exactly (0..14).
inline constexpr int kMxWindowSteps = 15;
// The step whose table is the e2m1 value times 2^-6 (version 4's decode): the fallback tiles'
// constant table, whose k-step factors 2^(b - 121) undo the 2^-6.
inline constexpr int kMxFallbackStep = 12;

// e4m3 byte of e2m1 magnitude code c (0..7: e1 e0 m) times 2^(6 - d), d in 0..kMxWindowSteps-1.
GCMOE_MX_HOST_DEVICE constexpr std::uint32_t mx_window_e4m3(int c, int d) {
  if (c == 0) {
    return 0;
  }
  int const e = (c == 1 ? -1 : (c >> 1) - 1) + 6 - d;  // the value's exponent
  int const m = c == 1 ? 0 : (c & 1);                  // its one mantissa bit
  if (e + 7 >= 1) {
    return static_cast<std::uint32_t>(((e + 7) << 3) | (m << 2));
  }
  // Subnormal: (2 + m) * 2^(e - 1) in units of 2^-9.
  return static_cast<std::uint32_t>((2 + m) << (e + 9)) >> 1;
}

// Word `half` (0: codes 0..3, 1: codes 4..7) of step d's table, byte i = code 4 half + i.
GCMOE_MX_HOST_DEVICE constexpr std::uint32_t mx_window_table_word(int d, int half) {
  std::uint32_t word = 0;
  for (int i = 0; i < 4; ++i) {
    word |= mx_window_e4m3(4 * half + i, d) << (8 * i);
  }
  return word;
}

}  // namespace gcmoe::kernels
