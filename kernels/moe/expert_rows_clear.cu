#include <algorithm>

#include "engine/common/cuda_check.h"
#include "kernels/hopper/pdl_launch.h"
#include "kernels/hopper/ptx.cuh"
#include "kernels/moe/expert_rows_clear.h"

namespace gcmoe::kernels {
namespace {

constexpr int kClearThreads = 256;

__global__ void __launch_bounds__(kClearThreads) clear_rows_done_kernel(int* rows_done, int rows) {
  // The kernel after it (the layer's combine, chained) may start launching; then every CTA of the
  // L2 before it has read its counters. The next kernel's own wait covers this grid, and this
  // grid completes only after L2 has: it reads nothing of L2's before it (enter_launch_chain).
  hopper::enter_launch_chain(true);
  for (int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); i < rows;
       i += static_cast<int>(gridDim.x * blockDim.x)) {
    rows_done[i] = 0;
  }
}

}  // namespace

Status launch_clear_rows_done(int* rows_done, int rows, bool overlap_previous,
                              cudaStream_t stream) {
  GCMOE_CHECK_ARG_MSG(rows_done != nullptr && rows > 0, "clear rows done: no counters");
  int const blocks = std::min(64, (rows + kClearThreads - 1) / kClearThreads);
  GCMOE_CHECK_CUDA(hopper::launch_with_pdl(clear_rows_done_kernel, dim3(blocks),
                                           dim3(kClearThreads), 0, stream, overlap_previous,
                                           rows_done, rows));
  return Status();
}

Status preload_clear_rows_done() {
  cudaFuncAttributes attributes{};
  GCMOE_CHECK_CUDA(cudaFuncGetAttributes(&attributes, clear_rows_done_kernel));
  return Status();
}

}  // namespace gcmoe::kernels
