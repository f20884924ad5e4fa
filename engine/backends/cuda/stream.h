#pragma once
// RAII CUDA streams (non-blocking, with a priority) and events (timing disabled), move-only.

#include <cuda_runtime.h>

#include <utility>

#include "engine/common/cuda_check.h"

namespace gcmoe::cuda {

// A stream's scheduling priority. The SM dispatcher starts the pending CTAs of a kGreatest stream
// before those of kNormal ones, so a small kernel beside a large grid (the shared expert beside
// the routed experts) runs as SMs free up instead of after the whole grid. Graphs keep it per
// kernel node (graph.h instantiates with cudaGraphInstantiateFlagUseNodePriority).
enum class StreamPriority { kNormal, kGreatest };

// The value CUDA takes for `priority` on the current device (lower is more urgent; 0 is normal).
inline StatusOr<int> stream_priority_value(StreamPriority const priority) {
  switch (priority) {
    case StreamPriority::kNormal:
      return 0;
    case StreamPriority::kGreatest: {
      int least = 0;
      int greatest = 0;
      GCMOE_CHECK_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
      return greatest;
    }
  }
  return 0;
}

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

  static StatusOr<Stream> create(StreamPriority const priority = StreamPriority::kNormal) {
    GCMOE_ASSIGN_OR_RETURN(int const value, stream_priority_value(priority));
    Stream out;
    GCMOE_CHECK_CUDA(cudaStreamCreateWithPriority(&out.stream_, cudaStreamNonBlocking, value));
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
