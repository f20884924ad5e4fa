#include "engine/model/cuda_weight_store.h"

#include <algorithm>
#include <cstring>

#include "engine/common/check.h"

namespace gcmoe::model {
namespace {

// A slot under 1 MiB would make per-copy overhead (~10 µs) dominate a 50 GB/s link.
constexpr std::int64_t kMinSlotBytes = 1LL << 20;

}  // namespace

Status CudaWeightStore::allocate(std::int64_t const bytes, int const workers) {
  GCMOE_CHECK_ARG(bytes >= 0 && workers > 0, "allocate {} bytes for {} workers", bytes, workers);
  GCMOE_CHECK_INTERNAL(lanes_.empty(), "device weight store allocated twice");
  GCMOE_CHECK_CUDA(cudaSetDevice(device_));
  GCMOE_ASSIGN_OR_RETURN(memory_,
                         cuda::DeviceBuffer<std::byte>::allocate(static_cast<std::size_t>(bytes)));
  std::int64_t const slot_bytes =
      std::max(kMinSlotBytes, staging_bytes_ / (std::int64_t{workers} * kSlots));
  for (int w = 0; w < workers; ++w) {
    auto lane = std::make_unique<Lane>();
    GCMOE_ASSIGN_OR_RETURN(lane->stream, cuda::Stream::create());
    for (int s = 0; s < kSlots; ++s) {
      GCMOE_ASSIGN_OR_RETURN(lane->slots[s],
                             cuda::PinnedBuffer::allocate(static_cast<std::size_t>(slot_bytes)));
      GCMOE_ASSIGN_OR_RETURN(lane->copied[s], cuda::Event::create());
    }
    lanes_.push_back(std::move(lane));
  }
  return Status();
}

Status CudaWeightStore::write(int const worker, std::int64_t const offset,
                              std::span<std::byte const> const bytes) {
  GCMOE_CHECK_ARG(worker >= 0 && worker < static_cast<int>(lanes_.size()), "worker {} of {} lanes",
                  worker, lanes_.size());
  GCMOE_CHECK_ARG(offset >= 0 && offset + static_cast<std::int64_t>(bytes.size()) <= size(),
                  "write of {} bytes at {} past the {}-byte store", bytes.size(), offset, size());
  // The runtime's current device is per thread; workers are plain threads.
  GCMOE_CHECK_CUDA(cudaSetDevice(device_));
  Lane& lane = *lanes_[static_cast<std::size_t>(worker)];
  std::size_t done = 0;
  while (done < bytes.size()) {
    int const s = lane.next;
    lane.next = (lane.next + 1) % kSlots;
    cuda::PinnedBuffer const& slot = lane.slots[s];
    std::size_t const piece = std::min(slot.size(), bytes.size() - done);
    GCMOE_RETURN_IF_ERROR(lane.copied[s].synchronize());  // the slot's previous copy is done
    std::memcpy(slot.data(), bytes.data() + done, piece);
    GCMOE_CHECK_CUDA(cudaMemcpyAsync(memory_.data() + offset + done, slot.data(), piece,
                                     cudaMemcpyHostToDevice, lane.stream.get()));
    GCMOE_RETURN_IF_ERROR(lane.copied[s].record(lane.stream.get()));
    done += piece;
  }
  return Status();
}

Status CudaWeightStore::flush() {
  GCMOE_CHECK_CUDA(cudaSetDevice(device_));
  for (auto const& lane : lanes_) {
    GCMOE_RETURN_IF_ERROR(lane->stream.synchronize());
  }
  lanes_.clear();  // the staging memory goes back as soon as the load is done
  return Status();
}

}  // namespace gcmoe::model
