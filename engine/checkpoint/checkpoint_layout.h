#pragma once
// Where every tensor of a checkpoint directory lives, from the safetensors headers alone (no
// tensor data is read): either `model.safetensors.index.json` plus its shards, or a single
// `model.safetensors`. The index and the shard headers are cross-checked.

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/checkpoint/safetensors_header.h"
#include "engine/common/status.h"

namespace gcmoe::checkpoint {

struct ShardHeader {
  std::string file;  // name inside the checkpoint directory
  SafetensorsHeader header;
};

class CheckpointLayout {
 public:
  // Errors name the file and, where one is at fault, the tensor: a shard the index names but that
  // is missing, a tensor the index puts in a shard that lacks it, a shard tensor the index does
  // not list, a tensor in two shards, and every header error of parse_safetensors_header.
  static StatusOr<CheckpointLayout> read(std::filesystem::path const& dir);

  std::filesystem::path const& dir() const { return dir_; }
  std::vector<ShardHeader> const& shards() const { return shards_; }
  std::size_t tensor_count() const { return locations_.size(); }

  struct Location {
    std::size_t shard = 0;
    TensorInfo const* tensor = nullptr;
  };
  // The tensor of that name and its shard, or NOT_FOUND naming it.
  StatusOr<Location> find(std::string_view name) const;

  // Move-only: locations_ points into shards_, whose elements keep their addresses on a move.
  CheckpointLayout(CheckpointLayout&&) = default;
  CheckpointLayout& operator=(CheckpointLayout&&) = default;
  CheckpointLayout(CheckpointLayout const&) = delete;
  CheckpointLayout& operator=(CheckpointLayout const&) = delete;
  ~CheckpointLayout() = default;

 private:
  CheckpointLayout() = default;

  std::filesystem::path dir_;
  std::vector<ShardHeader> shards_;
  std::unordered_map<std::string_view, Location> locations_;  // keys view TensorInfo::name
};

}  // namespace gcmoe::checkpoint
