#include <nccl_device.h>

#include "engine/backends/cuda/nccl_lsa_pointers.h"
#include "engine/common/cuda_check.h"

namespace gcmoe::cuda {
namespace {

// One thread per LSA peer; thread 0 also reads this rank's LSA rank.
__global__ void read_lsa_pointers(ncclWindow_t window, int n, void** pointers, int* own_lsa_rank) {
  int const i = static_cast<int>(threadIdx.x);
  if (i < n) {
    pointers[i] = ncclGetLsaPointer(window, 0, i);
  }
  if (i == 0) {
    *own_lsa_rank = window->lsaRank;
  }
}

}  // namespace

Status nccl_lsa_pointers(ncclWindow_t window, std::span<void*> pointers, int& own_lsa_rank) {
  int const n = static_cast<int>(pointers.size());
  GCMOE_CHECK_ARG_MSG(n >= 1 && n <= kMaxNcclLsaRanks, "1 to 32 LSA peers");
  // Scratch: the pointers, then the LSA rank.
  void** scratch = nullptr;
  GCMOE_CHECK_CUDA(cudaMalloc(&scratch, sizeof(void*) * (n + 1)));
  auto* const rank = reinterpret_cast<int*>(scratch + n);
  read_lsa_pointers<<<1, kMaxNcclLsaRanks>>>(window, n, scratch, rank);
  cudaError_t error = cudaGetLastError();
  if (error == cudaSuccess) {
    error = cudaMemcpy(pointers.data(), scratch, sizeof(void*) * n, cudaMemcpyDeviceToHost);
  }
  if (error == cudaSuccess) {
    error = cudaMemcpy(&own_lsa_rank, rank, sizeof(int), cudaMemcpyDeviceToHost);
  }
  cudaFree(scratch);
  GCMOE_CHECK_CUDA(error);
  return Status();
}

}  // namespace gcmoe::cuda
