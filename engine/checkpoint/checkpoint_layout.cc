#include "engine/checkpoint/checkpoint_layout.h"

#include <fmt/format.h>

#include <utility>

#include "engine/checkpoint/file_handle.h"
#include "engine/checkpoint/safetensors_index.h"
#include "engine/checkpoint/safetensors_writer.h"
#include "engine/common/check.h"

namespace gcmoe::checkpoint {
namespace {

// An index lists one entry per tensor (~120k for GLM-5.2, ~10 MB); anything far larger is not one.
constexpr std::uint64_t kMaxIndexBytes = 256ULL << 20;

StatusOr<std::string> read_text_file(std::filesystem::path const& path) {
  GCMOE_ASSIGN_OR_RETURN(ReadOnlyFile const file, ReadOnlyFile::open(path));
  GCMOE_CHECK_ARG(file.size() <= kMaxIndexBytes, "{}: {} bytes is too large for an index",
                  path.string(), file.size());
  std::string text(static_cast<std::size_t>(file.size()), '\0');
  GCMOE_RETURN_IF_ERROR(file.read_at(0, std::as_writable_bytes(std::span<char>(text))));
  return text;
}

}  // namespace

StatusOr<CheckpointLayout> CheckpointLayout::read(std::filesystem::path const& dir) {
  CheckpointLayout layout;
  layout.dir_ = dir;
  std::filesystem::path const index_path = dir / kIndexFileName;
  std::error_code error;
  if (!std::filesystem::exists(index_path, error)) {
    std::filesystem::path const single = dir / kSingleFileName;
    if (!std::filesystem::exists(single, error)) {
      return not_found_error(fmt::format("{}: neither {} nor {} is present", dir.string(),
                                         kIndexFileName, kSingleFileName));
    }
    GCMOE_ASSIGN_OR_RETURN(SafetensorsHeader header, read_safetensors_header(single));
    layout.shards_.push_back(ShardHeader{kSingleFileName, std::move(header)});
    for (TensorInfo const& tensor : layout.shards_.front().header.tensors) {
      layout.locations_.emplace(tensor.name, Location{0, &tensor});
    }
    return layout;
  }

  GCMOE_ASSIGN_OR_RETURN(std::string const text, read_text_file(index_path));
  GCMOE_ASSIGN_OR_RETURN(ShardIndex const index,
                         parse_safetensors_index(text, index_path.string()));
  // Every header is read before any pointer into shards_ is taken, so none is invalidated.
  layout.shards_.reserve(index.shard_files.size());
  for (std::string const& file : index.shard_files) {
    auto header = read_safetensors_header(dir / file);
    if (!header.ok()) {
      return header.status().with_context(
          fmt::format("shard {} named by {}", file, kIndexFileName));
    }
    layout.shards_.push_back(ShardHeader{file, std::move(header).value()});
  }
  for (std::size_t shard = 0; shard < layout.shards_.size(); ++shard) {
    ShardHeader const& current = layout.shards_[shard];
    for (TensorInfo const& tensor : current.header.tensors) {
      auto const [it, added] = layout.locations_.emplace(tensor.name, Location{shard, &tensor});
      if (!added) {
        return invalid_argument_error(
            fmt::format("{}: tensor '{}' is in both {} and {}", dir.string(), tensor.name,
                        layout.shards_[it->second.shard].file, current.file));
      }
    }
  }
  for (auto const& [name, location] : layout.locations_) {
    auto const mapped = index.weight_map.find(std::string(name));
    if (mapped == index.weight_map.end() || mapped->second != location.shard) {
      return invalid_argument_error(
          fmt::format("{}: tensor '{}' is in {} but {} {}", dir.string(), name,
                      layout.shards_[location.shard].file, kIndexFileName,
                      mapped == index.weight_map.end()
                          ? std::string("does not list it")
                          : fmt::format("maps it to {}", index.shard_files[mapped->second])));
    }
  }
  for (auto const& [name, shard] : index.weight_map) {
    if (!layout.locations_.contains(name)) {
      return invalid_argument_error(fmt::format("{}: {} maps tensor '{}' to {}, which lacks it",
                                                dir.string(), kIndexFileName, name,
                                                index.shard_files[shard]));
    }
  }
  return layout;
}

StatusOr<CheckpointLayout::Location> CheckpointLayout::find(std::string_view name) const {
  auto const it = locations_.find(name);
  if (it == locations_.end()) {
    return not_found_error(fmt::format("{}: no tensor '{}'", dir_.string(), name));
  }
  return it->second;
}

}  // namespace gcmoe::checkpoint
