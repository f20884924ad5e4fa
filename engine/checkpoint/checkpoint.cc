#include "engine/checkpoint/checkpoint.h"

#include <fmt/format.h>

#include <utility>

#include "engine/common/check.h"

namespace gcmoe::checkpoint {

StatusOr<Checkpoint> Checkpoint::open(std::filesystem::path const& dir) {
  GCMOE_ASSIGN_OR_RETURN(CheckpointLayout layout, CheckpointLayout::read(dir));
  std::vector<MappedFile> maps;
  maps.reserve(layout.shards().size());
  for (ShardHeader const& shard : layout.shards()) {
    GCMOE_ASSIGN_OR_RETURN(MappedFile map, MappedFile::open(dir / shard.file));
    // The header was validated against the size the file had then; a file replaced or cut since
    // would let a view run past the mapping.
    if (map.bytes().size() != shard.header.file_size) {
      return data_loss_error(fmt::format("{}: size changed from {} to {} bytes while opening",
                                         (dir / shard.file).string(), shard.header.file_size,
                                         map.bytes().size()));
    }
    maps.push_back(std::move(map));
  }
  return Checkpoint(std::move(layout), std::move(maps));
}

TensorView Checkpoint::view(std::size_t shard, TensorInfo const& tensor) const {
  return TensorView{tensor.name, tensor.dtype, tensor.shape,
                    maps_[shard].bytes().subspan(tensor.begin, tensor.size)};
}

StatusOr<TensorView> Checkpoint::tensor(std::string_view name) const {
  GCMOE_ASSIGN_OR_RETURN(CheckpointLayout::Location const location, layout_.find(name));
  return view(location.shard, *location.tensor);
}

std::vector<TensorView> Checkpoint::shard_tensors(std::size_t shard) const {
  std::vector<TensorView> views;
  for (TensorInfo const& tensor : layout_.shards()[shard].header.tensors) {
    views.push_back(view(shard, tensor));
  }
  return views;
}

}  // namespace gcmoe::checkpoint
