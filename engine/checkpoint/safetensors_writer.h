#pragma once
// Writes safetensors files: one file, or shards `model-0000k-of-0000n.safetensors` plus
// `model.safetensors.index.json` in the layout the Hugging Face releases use. Used by tests and
// the tiny-model writer; tensors are held in memory until written, so it is for small models.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "engine/checkpoint/dtype.h"
#include "engine/common/status.h"

namespace gcmoe::checkpoint {

class SafetensorsWriter {
 public:
  // Adds a tensor (bytes copied). Shape × dtype size must equal bytes.size(); names are unique.
  Status add(std::string name, DType dtype, std::vector<std::int64_t> shape,
             std::span<std::byte const> bytes);

  // A `__metadata__` string entry of every file written (e.g. "format" = "pt", the default).
  void set_metadata(std::string key, std::string value);

  // One file holding every tensor, in the order they were added.
  Status write_file(std::filesystem::path const& path) const;

  // Shards of at most `max_shard_bytes` tensor data each (a larger tensor gets a shard of its
  // own), in insertion order, named model-0000k-of-0000n.safetensors, plus
  // model.safetensors.index.json whose metadata.total_size is the sum of tensor bytes. The
  // directory is created if needed; existing files of the same names are replaced.
  Status write_sharded(std::filesystem::path const& dir, std::int64_t max_shard_bytes) const;

  std::size_t tensor_count() const { return tensors_.size(); }
  std::int64_t total_bytes() const;

 private:
  struct Entry {
    std::string name;
    DType dtype;
    std::vector<std::int64_t> shape;
    std::vector<std::byte> bytes;
  };

  Status write_entries(std::filesystem::path const& path,
                       std::vector<Entry const*> const& entries) const;

  std::vector<Entry> tensors_;
  std::map<std::string, std::string> metadata_ = {{"format", "pt"}};
};

// Shard file name of the k-th (1-based) of n shards: "model-00002-of-00005.safetensors".
std::string shard_file_name(int k, int n);

inline constexpr char kIndexFileName[] = "model.safetensors.index.json";
inline constexpr char kSingleFileName[] = "model.safetensors";

}  // namespace gcmoe::checkpoint
