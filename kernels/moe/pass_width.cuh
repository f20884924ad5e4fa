#pragma once
// The expert kernels' pass width: a chunk loop is instantiated per WGMMA width, and a pass runs
// the narrowest one that covers its rows (v2.7 FP8, v5.8 MXFP4: a pass with fewer rows than its
// kernel's kN does a narrower WGMMA, fold and token-scale pass).

#include <type_traits>

namespace gcmoe::kernels {

// f(std::integral_constant<int, kW>{}) for the narrowest kW of kStep, 2·kStep, ... kN with
// rows <= kW (kN when rows exceeds them all). One branch per pass, around the whole chunk loop.
template <int kN, int kStep, int kW = kStep, typename F>
__device__ __forceinline__ void with_pass_width(int rows, F const& f) {
  if constexpr (kW >= kN) {
    f(std::integral_constant<int, kN>{});
  } else if (rows <= kW) {
    f(std::integral_constant<int, kW>{});
  } else {
    with_pass_width<kN, kStep, kW + kStep>(rows, f);
  }
}

}  // namespace gcmoe::kernels
