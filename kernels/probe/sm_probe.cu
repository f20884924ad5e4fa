#include "engine/common/cuda_check.h"
#include "kernels/probe/sm_probe.h"

namespace gcmoe::kernels {
namespace {

constexpr int kThreads = 128;

__device__ __forceinline__ unsigned int read_smid() {
  unsigned int smid = 0;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  return smid;
}

__device__ __forceinline__ std::uint64_t global_time_ns() {
  std::uint64_t t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void sm_probe_kernel(int* smids, unsigned int* set_flag, unsigned int* wait_flag,
                                int* timed_out, std::uint64_t timeout_ns) {
  extern __shared__ unsigned char occupy[];  // Only its size matters: one block per SM.
  if (threadIdx.x != 0) {
    return;
  }
  occupy[0] = 1;
  smids[blockIdx.x] = static_cast<int>(read_smid());
  if (blockIdx.x != 0) {
    return;
  }
  if (set_flag != nullptr) {
    __threadfence();
    atomicExch(set_flag, 1u);
  }
  if (wait_flag != nullptr) {
    std::uint64_t const start = global_time_ns();
    while (atomicAdd(wait_flag, 0u) == 0u) {
      if (global_time_ns() - start > timeout_ns) {
        *timed_out = 1;
        return;
      }
      __nanosleep(1000);
    }
  }
}

StatusOr<int> probe_shared_bytes() {
  int device = 0;
  GCMOE_CHECK_CUDA(cudaGetDevice(&device));
  int bytes = 0;
  GCMOE_CHECK_CUDA(cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return bytes;
}

}  // namespace

Status preload_sm_probe() {
  cudaFuncAttributes attributes{};
  GCMOE_CHECK_CUDA(cudaFuncGetAttributes(&attributes, sm_probe_kernel));
  GCMOE_ASSIGN_OR_RETURN(int const bytes, probe_shared_bytes());
  GCMOE_CHECK_CUDA(
      cudaFuncSetAttribute(sm_probe_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  return Status();
}

Status launch_sm_probe(SmProbeLaunch const& launch, cudaStream_t stream) {
  GCMOE_CHECK_ARG_MSG(launch.smids != nullptr && launch.blocks > 0, "sm probe: no output buffer");
  GCMOE_CHECK_ARG_MSG(launch.wait_flag == nullptr || launch.timed_out != nullptr,
                      "sm probe: a wait needs a timed_out output");
  GCMOE_ASSIGN_OR_RETURN(int const bytes, probe_shared_bytes());
  sm_probe_kernel<<<static_cast<unsigned>(launch.blocks), kThreads, static_cast<std::size_t>(bytes),
                    stream>>>(launch.smids, launch.set_flag, launch.wait_flag, launch.timed_out,
                              launch.timeout_ns);
  GCMOE_CHECK_LAUNCH();
  return Status();
}

}  // namespace gcmoe::kernels
