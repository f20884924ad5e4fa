#pragma once
// `model.safetensors.index.json`: which shard file holds each tensor of a sharded checkpoint.
//   {"metadata": {"total_size": N}, "weight_map": {"tensor name":
//   "model-00001-of-00046.safetensors"}}

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"

namespace gcmoe::checkpoint {

struct ShardIndex {
  std::vector<std::string> shard_files;           // distinct, in order of first appearance
  std::map<std::string, std::size_t> weight_map;  // tensor name -> position in shard_files
  std::optional<std::int64_t> total_size;         // bytes of tensor data, when given
};

// Validates the index text: a JSON object with a `weight_map` object of plain file names (no
// directories: a shard must sit next to the index), no tensor named twice, and an optional
// non-negative integer `metadata.total_size`. Errors start with `label`.
StatusOr<ShardIndex> parse_safetensors_index(std::string_view json_text, std::string_view label);

}  // namespace gcmoe::checkpoint
