#pragma once
// Weights in device memory, streamed through a bounded pinned staging area: each loader worker
// owns a lane of two pinned slots and a stream; a write copies a slot-sized piece of host bytes
// (the checkpoint mapping, so the page-in from disk happens here) into a free slot and queues its
// host-to-device copy, so reading the next piece overlaps the previous transfer. Pinned memory
// in use never exceeds `staging_bytes`, whatever the checkpoint size. CUDA builds only.

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/backends/cuda/device_buffer.h"
#include "engine/backends/cuda/pinned_buffer.h"
#include "engine/backends/cuda/stream.h"
#include "engine/model/weight_store.h"

namespace gcmoe::model {

// 512 MiB: 16 workers × 2 slots × 16 MiB, enough to keep PCIe busy (one 16 MiB copy ≈ 0.3 ms).
inline constexpr std::int64_t kDefaultStagingBytes = 512LL << 20;

class CudaWeightStore final : public WeightStore {
 public:
  CudaWeightStore(int device, std::int64_t staging_bytes)
      : device_(device), staging_bytes_(staging_bytes) {}

  WeightLocation location() const override { return WeightLocation::kDevice; }
  Status allocate(std::int64_t bytes, int workers) override;
  Status write(int worker, std::int64_t offset, std::span<std::byte const> bytes) override;
  Status flush() override;
  std::int64_t size() const override { return static_cast<std::int64_t>(memory_.size()); }
  std::byte* data() const override { return memory_.data(); }

  int device() const { return device_; }

 private:
  static constexpr int kSlots = 2;
  struct Lane {
    cuda::Stream stream;
    cuda::PinnedBuffer slots[kSlots];
    cuda::Event copied[kSlots];  // the slot's last copy has left it
    int next = 0;
  };

  int device_ = 0;
  std::int64_t staging_bytes_ = kDefaultStagingBytes;
  cuda::DeviceBuffer<std::byte> memory_;
  std::vector<std::unique_ptr<Lane>> lanes_;
};

}  // namespace gcmoe::model
