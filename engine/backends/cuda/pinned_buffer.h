#pragma once
// RAII page-locked host memory (cudaMallocHost / cudaFreeHost), move-only: the staging buffers
// that host-to-device copies run from asynchronously.

#include <cuda_runtime.h>

#include <cstddef>
#include <span>
#include <utility>

#include "engine/common/cuda_check.h"

namespace gcmoe::cuda {

class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(PinnedBuffer const&) = delete;
  PinnedBuffer& operator=(PinnedBuffer const&) = delete;
  PinnedBuffer(PinnedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  ~PinnedBuffer() { release(); }

  static StatusOr<PinnedBuffer> allocate(std::size_t bytes) {
    PinnedBuffer out;
    void* data = nullptr;
    if (bytes > 0) {
      GCMOE_CHECK_CUDA(cudaMallocHost(&data, bytes));
    }
    out.data_ = static_cast<std::byte*>(data);
    out.size_ = bytes;
    return out;
  }

  std::span<std::byte> bytes() const { return {data_, size_}; }
  std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  void release() {
    if (data_ != nullptr) {
      cudaFreeHost(data_);  // A failure here means the context is already gone.
    }
    data_ = nullptr;
    size_ = 0;
  }

  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace gcmoe::cuda
