#pragma once
// RAII device allocation of `count` elements of T (cudaMalloc / cudaFree), move-only.

#include <cuda_runtime.h>

#include <cstddef>
#include <span>
#include <utility>

#include "engine/common/cuda_check.h"

namespace gcmoe::cuda {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer const&) = delete;
  DeviceBuffer& operator=(DeviceBuffer const&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      count_ = std::exchange(other.count_, 0);
    }
    return *this;
  }
  ~DeviceBuffer() { release(); }

  static StatusOr<DeviceBuffer> allocate(std::size_t count) {
    DeviceBuffer out;
    if (count > 0) {
      GCMOE_CHECK_CUDA(cudaMalloc(&out.data_, count * sizeof(T)));
    }
    out.count_ = count;
    return out;
  }

  // Synchronous: when it returns, kernels on any stream see the bytes. (A pageable host-to-device
  // cudaMemcpy may return before its DMA lands, and the engine's streams are non-blocking, so
  // they would not wait for it.)
  Status copy_from_host(std::span<T const> host) {
    GCMOE_CHECK_ARG(host.size() == count_, "copy of {} elements into a buffer of {}", host.size(),
                    count_);
    GCMOE_CHECK_CUDA(cudaMemcpy(data_, host.data(), host.size_bytes(), cudaMemcpyHostToDevice));
    GCMOE_CHECK_CUDA(cudaStreamSynchronize(nullptr));
    return Status();
  }

  Status copy_to_host(std::span<T> host) const {
    GCMOE_CHECK_ARG(host.size() == count_, "copy of a buffer of {} elements into {}", count_,
                    host.size());
    GCMOE_CHECK_CUDA(cudaMemcpy(host.data(), data_, host.size_bytes(), cudaMemcpyDeviceToHost));
    return Status();
  }

  // Fills every byte with `byte` (zeroing flags at setup, poisoning outputs before a test run),
  // synchronously like copy_from_host: cudaMemset runs on the legacy stream, which the engine's
  // non-blocking streams do not wait for (a memset still pending when the first step starts
  // overwrote that step's intermediate rows in a multi-process test).
  Status fill_bytes(int byte) {
    GCMOE_CHECK_CUDA(cudaMemset(data_, byte, count_ * sizeof(T)));
    GCMOE_CHECK_CUDA(cudaStreamSynchronize(nullptr));
    return Status();
  }

  T* data() const { return data_; }
  std::size_t size() const { return count_; }

 private:
  void release() {
    if (data_ != nullptr) {
      cudaFree(data_);  // A failure here means the context is already gone; nothing to return to.
    }
    data_ = nullptr;
    count_ = 0;
  }

  T* data_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace gcmoe::cuda
