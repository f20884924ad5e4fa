#pragma once
// Where loaded weights land: one contiguous allocation per rank (host memory for the CPU backend,
// device memory for CUDA, cuda_weight_store.h), filled by the loader's workers. Each worker
// writes disjoint ranges through its own lane, so writes from different workers may run
// concurrently; one worker's writes are issued from one thread at a time.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "engine/common/status.h"

namespace gcmoe::model {

enum class WeightLocation { kHost, kDevice };

std::string_view weight_location_name(WeightLocation location);

class WeightStore {
 public:
  virtual ~WeightStore() = default;

  virtual WeightLocation location() const = 0;
  // Allocates `bytes` and prepares `workers` write lanes; called once, before any write.
  virtual Status allocate(std::int64_t bytes, int workers) = 0;
  // Copies host bytes (a checkpoint mapping, or a transform's output, reusable once this returns)
  // to [offset, offset + bytes.size()).
  virtual Status write(int worker, std::int64_t offset, std::span<std::byte const> bytes) = 0;
  // Returns once every write is complete at the destination; releases staging resources.
  virtual Status flush() = 0;

  virtual std::int64_t size() const = 0;
  // Start of the allocation: a host pointer (kHost) or a device pointer (kDevice).
  virtual std::byte* data() const = 0;
};

// Plain host memory, left uninitialized until written (the loader writes every byte it places).
class HostWeightStore final : public WeightStore {
 public:
  WeightLocation location() const override { return WeightLocation::kHost; }
  Status allocate(std::int64_t bytes, int workers) override;
  Status write(int worker, std::int64_t offset, std::span<std::byte const> bytes) override;
  Status flush() override { return Status(); }
  std::int64_t size() const override { return size_; }
  std::byte* data() const override { return memory_.get(); }

 private:
  std::unique_ptr<std::byte[]> memory_;
  std::int64_t size_ = 0;
};

}  // namespace gcmoe::model
