#pragma once
// A checkpoint directory opened for reading tensor data: the validated layout plus one read-only
// mapping per shard. Tensor views point into the mappings (no copy); they stay valid while the
// Checkpoint lives. Pages are read from disk only when a view's bytes are touched.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/checkpoint/checkpoint_layout.h"
#include "engine/checkpoint/dtype.h"
#include "engine/checkpoint/file_handle.h"
#include "engine/common/status.h"

namespace gcmoe::checkpoint {

struct TensorView {
  std::string_view name;
  DType dtype = DType::kU8;
  std::span<std::int64_t const> shape;
  std::span<std::byte const> bytes;
};

class Checkpoint {
 public:
  // Reads and cross-checks every header (CheckpointLayout::read), then maps every shard.
  static StatusOr<Checkpoint> open(std::filesystem::path const& dir);

  CheckpointLayout const& layout() const { return layout_; }

  // NOT_FOUND naming the tensor when the checkpoint has none of that name.
  StatusOr<TensorView> tensor(std::string_view name) const;

  // Every tensor of shard `shard` (< layout().shards().size()) in offset order (the order that
  // reads each file front to back).
  std::vector<TensorView> shard_tensors(std::size_t shard) const;

 private:
  Checkpoint(CheckpointLayout layout, std::vector<MappedFile> maps)
      : layout_(std::move(layout)), maps_(std::move(maps)) {}

  TensorView view(std::size_t shard, TensorInfo const& tensor) const;

  CheckpointLayout layout_;
  std::vector<MappedFile> maps_;  // one per layout_.shards()
};

}  // namespace gcmoe::checkpoint
