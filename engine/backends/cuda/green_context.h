#pragma once
// GC-MoE's split of one GPU: a small communication partition (token dispatch) and a large compute
// partition (grouped GEMM), each its own CUDA green context with its own stream. Both roles get a
// green context because primary-context work may run on any SM (docs/gpu-machine.md).
//
// Every kernel that will run concurrently on the two partitions must be loaded before the first
// concurrent launch (lazy loading can deadlock a spinning kernel): callers preload them.

#include <cuda.h>

#include "engine/common/status.h"

namespace gcmoe::cuda {

// RAII owner of one green context and two non-blocking streams inside it (the main one, and a
// side stream for work that runs beside it on the same partition).
class GreenContext {
 public:
  GreenContext() = default;
  GreenContext(GreenContext const&) = delete;
  GreenContext& operator=(GreenContext const&) = delete;
  GreenContext(GreenContext&& other) noexcept;
  GreenContext& operator=(GreenContext&& other) noexcept;
  ~GreenContext();

  // Creates a green context over `resource` (an SM split result) on `device`.
  static StatusOr<GreenContext> create(CUdevice device, CUdevResource resource);

  CUstream stream() const { return stream_; }
  CUstream side_stream() const { return side_stream_; }
  // The context to name in CUDA graph kernel nodes (CUDA_KERNEL_NODE_PARAMS_v2::ctx).
  CUcontext context() const { return context_; }
  int sm_count() const { return sm_count_; }
  // Waits for the work queued on both streams. cudaDeviceSynchronize is not enough: on the GPU
  // machine's driver (580) it returned while a graph launched on one green context's stream still
  // ran a kernel node captured from the other's (GC-MoE's replay shape; the gpu test
  // "synchronizing a partition waits for its streams' work" prints it each run).
  Status synchronize() const;

 private:
  void reset();

  CUgreenCtx green_ctx_ = nullptr;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  CUstream side_stream_ = nullptr;
  int sm_count_ = 0;
};

// Rounds a requested comm-partition size the way the driver does: at least `min_sms`, up to a
// multiple of `alignment`. Plain function so the policy is testable without a GPU.
int round_partition_sms(int requested, int min_sms, int alignment);

class SmPartition {
 public:
  // Splits device `ordinal` into a comm partition of at least `comm_sms` SMs (rounded by the
  // driver's granularity) and a compute partition holding the rest. INVALID_ARGUMENT when the
  // request leaves the compute partition below the driver's minimum.
  static StatusOr<SmPartition> create(int ordinal, int comm_sms);

  GreenContext const& comm() const { return comm_; }
  GreenContext const& compute() const { return compute_; }
  int device_sm_count() const { return device_sm_count_; }
  // Both partitions' streams (GreenContext::synchronize): what a host that hands the device to
  // other streams next (another graph, another mode) must wait for.
  Status synchronize() const;

 private:
  GreenContext comm_;
  GreenContext compute_;
  int device_sm_count_ = 0;
};

}  // namespace gcmoe::cuda
