#pragma once
// The header of one safetensors file, parsed and validated without touching tensor data:
//   [8-byte LE header length N][N bytes of JSON][data section]
// JSON: {"__metadata__": {str: str}?, name: {"dtype", "shape", "data_offsets": [begin, end]}, ...}
// with offsets relative to the data section. Every check a corrupted or truncated file could fail
// is made here, so a tensor that passes can be read through its offsets without bounds checks.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/checkpoint/dtype.h"
#include "engine/common/status.h"

namespace gcmoe::checkpoint {

// The reference implementation refuses headers over 100 MB; the largest real shard header
// (GLM-5.2-FP8, ~1,000 tensors) is under 200 KB.
inline constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

struct TensorInfo {
  std::string name;
  DType dtype = DType::kU8;
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0;  // byte offset of the first element, from the start of the file
  std::uint64_t size = 0;   // bytes
};

struct SafetensorsHeader {
  std::uint64_t file_size = 0;      // bytes
  std::uint64_t data_offset = 0;    // file offset of the data section: 8 + header length
  std::vector<TensorInfo> tensors;  // in ascending offset order
  std::map<std::string, std::string> metadata;

  // The tensor of that name, or nullptr.
  TensorInfo const* find(std::string_view name) const;
};

// How many bytes from the start of the file parse_safetensors_header needs: 8 + the header
// length stored in `first_eight` (which must hold at least 8 bytes).
std::uint64_t header_prefix_size(std::span<std::byte const> first_eight);

// Validates `prefix` — the first bytes of a file of `file_size` bytes, at least
// min(file_size, header_prefix_size) of them — as a safetensors header. Errors are
// INVALID_ARGUMENT (or DATA_LOSS for a file cut short) and start with `file_label`, naming the
// tensor when one is at fault.
StatusOr<SafetensorsHeader> parse_safetensors_header(std::span<std::byte const> prefix,
                                                     std::uint64_t file_size,
                                                     std::string_view file_label);

// Reads only the header of the file at `path` (no tensor data) and validates it.
StatusOr<SafetensorsHeader> read_safetensors_header(std::filesystem::path const& path);

}  // namespace gcmoe::checkpoint
