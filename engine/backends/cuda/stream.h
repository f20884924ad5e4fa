#pragma once
// RAII CUDA streams (non-blocking) and events (timing disabled), move-only.

#include <cuda_runtime.h>

#include <utility>

#include "engine/common/cuda_check.h"

namespace gcmoe::cuda {

class Stream {
 public:
  Stream() = default;
  Stream(Stream const&) = delete;
  Stream& operator=(Stream const&) = delete;
  Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}
  Stream& operator=(Stream&& other) noexcept {
    if (this != &other) {
      release();
      stream_ = std::exchange(other.stream_, nullptr);
    }
    return *this;
  }
  ~Stream() { release(); }

  static StatusOr<Stream> create() {
    Stream out;
    GCMOE_CHECK_CUDA(cudaStreamCreateWithFlags(&out.stream_, cudaStreamNonBlocking));
    return out;
  }

  cudaStream_t get() const { return stream_; }

  Status synchronize() const {
    GCMOE_CHECK_CUDA(cudaStreamSynchronize(stream_));
    return Status();
  }

 private:
  void release() {
    if (stream_ != nullptr) {
      cudaStreamDestroy(stream_);
    }
    stream_ = nullptr;
  }

  cudaStream_t stream_ = nullptr;
};

class Event {
 public:
  Event() = default;
  Event(Event const&) = delete;
  Event& operator=(Event const&) = delete;
  Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  Event& operator=(Event&& other) noexcept {
    if (this != &other) {
      release();
      event_ = std::exchange(other.event_, nullptr);
    }
    return *this;
  }
  ~Event() { release(); }

  static StatusOr<Event> create() {
    Event out;
    GCMOE_CHECK_CUDA(cudaEventCreateWithFlags(&out.event_, cudaEventDisableTiming));
    return out;
  }

  cudaEvent_t get() const { return event_; }

  Status record(cudaStream_t const stream) const {
    GCMOE_CHECK_CUDA(cudaEventRecord(event_, stream));
    return Status();
  }
  // Returns at once for an event never recorded.
  Status synchronize() const {
    GCMOE_CHECK_CUDA(cudaEventSynchronize(event_));
    return Status();
  }

 private:
  void release() {
    if (event_ != nullptr) {
      cudaEventDestroy(event_);
    }
    event_ = nullptr;
  }

  cudaEvent_t event_ = nullptr;
};

// Makes `to` wait for the work enqueued on `from` so far (an event record and a wait: it also
// forks and joins streams in a capture); nothing when they are the same stream.
inline Status order_after(cudaEvent_t event, cudaStream_t from, cudaStream_t to) {
  if (from == to) {
    return Status();
  }
  GCMOE_CHECK_CUDA(cudaEventRecord(event, from));
  GCMOE_CHECK_CUDA(cudaStreamWaitEvent(to, event, 0));
  return Status();
}

}  // namespace gcmoe::cuda
