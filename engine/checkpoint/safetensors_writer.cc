#include "engine/checkpoint/safetensors_writer.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <system_error>
#include <utility>

#include "engine/checkpoint/shape.h"
#include "engine/common/check.h"

namespace gcmoe::checkpoint {
namespace {

// The 8-byte little-endian header length that starts every safetensors file.
std::string encode_length(std::uint64_t length) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) {
    out[static_cast<std::size_t>(i)] = static_cast<char>((length >> (8 * i)) & 0xffU);
  }
  return out;
}

}  // namespace

std::string shard_file_name(int k, int n) {
  return fmt::format("model-{:05d}-of-{:05d}.safetensors", k, n);
}

Status SafetensorsWriter::add(std::string name, DType dtype, std::vector<std::int64_t> shape,
                              std::span<std::byte const> bytes) {
  GCMOE_CHECK_ARG(!name.empty() && name != "__metadata__", "bad tensor name '{}'", name);
  for (Entry const& entry : tensors_) {
    GCMOE_CHECK_ARG(entry.name != name, "tensor '{}' added twice", name);
  }
  GCMOE_ASSIGN_OR_RETURN(std::int64_t const expected, shape_bytes(shape, dtype));
  GCMOE_CHECK_ARG(expected == static_cast<std::int64_t>(bytes.size()),
                  "tensor '{}': shape {} of {} needs {} bytes, got {}", name, shape_string(shape),
                  dtype_name(dtype), expected, bytes.size());
  tensors_.push_back(Entry{std::move(name), dtype, std::move(shape),
                           std::vector<std::byte>(bytes.begin(), bytes.end())});
  return Status();
}

void SafetensorsWriter::set_metadata(std::string key, std::string value) {
  metadata_[std::move(key)] = std::move(value);
}

std::int64_t SafetensorsWriter::total_bytes() const {
  std::int64_t total = 0;
  for (Entry const& entry : tensors_) {
    total += static_cast<std::int64_t>(entry.bytes.size());
  }
  return total;
}

Status SafetensorsWriter::write_entries(std::filesystem::path const& path,
                                        std::vector<Entry const*> const& entries) const {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  header["__metadata__"] = metadata_;
  std::uint64_t offset = 0;
  for (Entry const* entry : entries) {
    std::uint64_t const end = offset + entry->bytes.size();
    header[entry->name] = {{"dtype", dtype_name(entry->dtype)},
                           {"shape", entry->shape},
                           {"data_offsets", {offset, end}}};
    offset = end;
  }
  std::string text = header.dump();
  // The data section starts 8-byte aligned, as the reference writer does (padding with spaces).
  text.append((8 - (text.size() % 8)) % 8, ' ');

  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    return unavailable_error(fmt::format("cannot create {}", path.string()));
  }
  std::string const length = encode_length(text.size());
  out.write(length.data(), static_cast<std::streamsize>(length.size()));
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  for (Entry const* entry : entries) {
    out.write(reinterpret_cast<char const*>(entry->bytes.data()),
              static_cast<std::streamsize>(entry->bytes.size()));
  }
  out.close();
  if (!out) {
    return data_loss_error(fmt::format("writing {} failed", path.string()));
  }
  return Status();
}

Status SafetensorsWriter::write_file(std::filesystem::path const& path) const {
  std::vector<Entry const*> all;
  all.reserve(tensors_.size());
  for (Entry const& entry : tensors_) {
    all.push_back(&entry);
  }
  return write_entries(path, all);
}

Status SafetensorsWriter::write_sharded(std::filesystem::path const& dir,
                                        std::int64_t max_shard_bytes) const {
  GCMOE_CHECK_ARG(max_shard_bytes > 0, "max_shard_bytes must be positive, got {}", max_shard_bytes);
  std::vector<std::vector<Entry const*>> shards;
  std::int64_t shard_bytes = 0;
  for (Entry const& entry : tensors_) {
    auto const size = static_cast<std::int64_t>(entry.bytes.size());
    if (shards.empty() || (shard_bytes > 0 && shard_bytes + size > max_shard_bytes)) {
      shards.emplace_back();
      shard_bytes = 0;
    }
    shards.back().push_back(&entry);
    shard_bytes += size;
  }
  if (shards.empty()) {
    shards.emplace_back();
  }

  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return unavailable_error(fmt::format("cannot create {}: {}", dir.string(), error.message()));
  }
  int const count = static_cast<int>(shards.size());
  nlohmann::ordered_json weight_map = nlohmann::ordered_json::object();
  for (int k = 0; k < count; ++k) {
    std::string const file = shard_file_name(k + 1, count);
    GCMOE_RETURN_IF_ERROR(write_entries(dir / file, shards[static_cast<std::size_t>(k)]));
    for (Entry const* entry : shards[static_cast<std::size_t>(k)]) {
      weight_map[entry->name] = file;
    }
  }
  nlohmann::ordered_json index = {{"metadata", {{"total_size", total_bytes()}}},
                                  {"weight_map", std::move(weight_map)}};
  std::ofstream out(dir / kIndexFileName, std::ios::trunc);
  out << index.dump(2) << '\n';
  out.close();
  if (!out) {
    return data_loss_error(fmt::format("writing {} failed", (dir / kIndexFileName).string()));
  }
  return Status();
}

}  // namespace gcmoe::checkpoint
