#pragma once
// Device memory for one align & sort output set (sizes from AlignSortShape), with the two things
// every caller that checks the kernel does: poison it before a run and read it back as an
// AlignSortResult to compare with align_sort_ref. Used by the GPU tests and the benchmark.

#include "engine/backends/cuda/device_buffer.h"
#include "kernels/moe/align_sort.h"
#include "kernels/moe/align_sort_ref.h"

namespace gcmoe::kernels {

class AlignSortBuffers {
 public:
  static StatusOr<AlignSortBuffers> allocate(AlignSortShape const& shape);

  AlignSortOutputs view() const {
    return {sorted_.data(), blocks_.data(), offsets_.data(), total_.data()};
  }
  // Every byte 0x7f, so an element the kernel skips never equals the reference.
  Status poison();
  // Synchronizes the device, then copies the four outputs to the host.
  StatusOr<AlignSortResult> read_back() const;

 private:
  cuda::DeviceBuffer<std::int32_t> sorted_;
  cuda::DeviceBuffer<std::int32_t> blocks_;
  cuda::DeviceBuffer<std::int32_t> offsets_;
  cuda::DeviceBuffer<std::int32_t> total_;
};

}  // namespace gcmoe::kernels
