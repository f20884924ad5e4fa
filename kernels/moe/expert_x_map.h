#pragma once
// The x rows' TMA tensor map of the expert WGMMA kernels (MXFP4: mxfp4_expert_wgmma.cu, FP8:
// fp8_expert_wgmma.cu): [x_rows, K] FP8 bytes, one 128-byte chunk of kN rows per box, 128-byte
// swizzle (the layout the consumers' WGMMA descriptor reads, as expert_x_rows_copy.cuh writes it
// by cp.async). A kernel takes the map as a parameter only where it copies x by TMA: an unread
// 128-byte parameter measured 7-13% slower for the MXFP4 8-row kernels at one GPU's T >= 32
// (thousands of short CTAs per launch; bench/NOTES.md v5.4). Included by .cu files only.

#include <cuda.h>

#include <type_traits>

#include "engine/common/cuda_driver.h"
#include "engine/common/status.h"
#include "kernels/moe/fp8_expert_gemm.h"

namespace gcmoe::kernels {

// Bytes of one x row per chunk: both kernels' K per chunk (FP8).
inline constexpr int kXMapChunkBytes = 128;

struct NoXMap {};
template <bool kTmaX>
using XMap = std::conditional_t<kTmaX, CUtensorMap, NoXMap>;

// The tensor map for kN-row passes over args.x (args.x_rows > 0 rows; rows past them read as
// zeros). INVALID_ARGUMENT when the driver refuses it (x not 16-byte aligned, too many rows).
template <int kN>
StatusOr<CUtensorMap> expert_x_tensor_map(Fp8ExpertGemmArgs const& args) {
  CUtensorMap map{};
  GCMOE_ASSIGN_OR_RETURN(cuda::DriverApi const* driver, cuda::driver_api());
  cuuint64_t const k_total = static_cast<cuuint64_t>(args.chunks) * kXMapChunkBytes;
  cuuint64_t const dims[2] = {k_total, static_cast<cuuint64_t>(args.x_rows)};
  cuuint64_t const strides[1] = {k_total};
  cuuint32_t const box[2] = {kXMapChunkBytes, kN};
  cuuint32_t const element_strides[2] = {1, 1};
  CUresult const r = driver->cuTensorMapEncodeTiled(
      &map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<std::uint8_t*>(args.x), dims, strides, box,
      element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  GCMOE_CHECK_ARG_MSG(r == CUDA_SUCCESS,
                      "expert wgmma: the x rows' tensor map was refused (x 16-byte aligned, "
                      "x_rows within 2^32?)");
  return map;
}

// The kernel's x map parameter: the tensor map with kTmaX (x_rows > 0), else an empty one.
template <int kN, bool kTmaX>
StatusOr<XMap<kTmaX>> expert_x_map(Fp8ExpertGemmArgs const& args) {
  if constexpr (kTmaX) {
    return expert_x_tensor_map<kN>(args);
  } else {
    return NoXMap{};
  }
}

}  // namespace gcmoe::kernels
