#include "engine/checkpoint/safetensors_header.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <utility>

#include "engine/checkpoint/file_handle.h"
#include "engine/checkpoint/shape.h"
#include "engine/common/check.h"

namespace gcmoe::checkpoint {
namespace {

using Json = nlohmann::json;

// A valid header nests three deep (root object, tensor entry, shape array). Deeper input is
// refused before the JSON parser sees it, so a hostile header cannot exhaust the stack.
constexpr int kMaxJsonDepth = 3;

int json_depth(std::string_view text) {
  int depth = 0;
  int deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char const c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return deepest;
}

// A non-negative JSON integer that fits int64, or nullopt.
std::optional<std::int64_t> as_count(Json const& value) {
  if (value.is_number_unsigned()) {
    auto const v = value.get<std::uint64_t>();
    if (v <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return static_cast<std::int64_t>(v);
    }
    return std::nullopt;
  }
  if (value.is_number_integer() && value.get<std::int64_t>() >= 0) {
    return value.get<std::int64_t>();
  }
  return std::nullopt;
}

class HeaderParser {
 public:
  HeaderParser(std::string_view label, std::uint64_t data_size)
      : label_(label), data_size_(data_size) {}

  Status error(std::string const& what) const {
    return invalid_argument_error(fmt::format("{}: {}", label_, what));
  }

  Status parse_metadata(Json const& value, SafetensorsHeader& header) const {
    if (!value.is_object()) {
      return error("__metadata__ is not an object");
    }
    for (auto const& [key, entry] : value.items()) {
      if (!entry.is_string()) {
        return error(fmt::format("__metadata__ entry '{}' is not a string", key));
      }
      header.metadata.emplace(key, entry.get<std::string>());
    }
    return Status();
  }

  StatusOr<TensorInfo> parse_tensor(std::string const& name, Json const& value) const {
    auto const fail = [&](std::string const& what) {
      return error(fmt::format("tensor '{}': {}", name, what));
    };
    if (!value.is_object()) {
      return fail("entry is not an object");
    }
    auto const dtype_it = value.find("dtype");
    if (dtype_it == value.end() || !dtype_it->is_string()) {
      return fail("missing or non-string 'dtype'");
    }
    auto const dtype = dtype_from_name(dtype_it->get<std::string>());
    if (!dtype.ok()) {
      return fail(dtype.status().message());
    }
    TensorInfo info{name, *dtype, {}, 0, 0};

    auto const shape_it = value.find("shape");
    if (shape_it == value.end() || !shape_it->is_array()) {
      return fail("missing or non-array 'shape'");
    }
    for (Json const& dim : *shape_it) {
      auto const count = as_count(dim);
      if (!count) {
        return fail(fmt::format("shape entry {} is not a non-negative integer", dim.dump()));
      }
      info.shape.push_back(*count);
    }

    auto const offsets_it = value.find("data_offsets");
    if (offsets_it == value.end() || !offsets_it->is_array() || offsets_it->size() != 2) {
      return fail("missing 'data_offsets' or not a [begin, end] pair");
    }
    auto const begin = as_count((*offsets_it)[0]);
    auto const end = as_count((*offsets_it)[1]);
    if (!begin || !end || *begin > *end) {
      return fail(fmt::format("data_offsets {} are not non-negative integers with begin <= end",
                              offsets_it->dump()));
    }
    if (static_cast<std::uint64_t>(*end) > data_size_) {
      return data_loss_error(fmt::format(
          "{}: tensor '{}': data_offsets [{}, {}] run past the {}-byte data section (truncated "
          "file?)",
          label_, name, *begin, *end, data_size_));
    }
    auto const bytes = shape_bytes(info.shape, info.dtype);
    if (!bytes.ok()) {
      return fail(bytes.status().message());
    }
    if (*bytes != *end - *begin) {
      return fail(fmt::format("shape {} of {} is {} bytes but data_offsets [{}, {}] span {}",
                              shape_string(info.shape), dtype_name(info.dtype), *bytes, *begin,
                              *end, *end - *begin));
    }
    info.begin = static_cast<std::uint64_t>(*begin);
    info.size = static_cast<std::uint64_t>(*bytes);
    return info;
  }

  // Tensors sorted by offset; empty tensors may sit anywhere, non-empty ones must not share bytes.
  Status check_overlaps(std::vector<TensorInfo>& tensors) const {
    std::sort(tensors.begin(), tensors.end(), [](TensorInfo const& a, TensorInfo const& b) {
      return a.begin != b.begin ? a.begin < b.begin : a.size < b.size;
    });
    TensorInfo const* previous = nullptr;
    for (TensorInfo const& tensor : tensors) {
      if (tensor.size == 0) {
        continue;
      }
      if (previous != nullptr && previous->begin + previous->size > tensor.begin) {
        return error(fmt::format("tensors '{}' [{}, {}) and '{}' [{}, {}) overlap", previous->name,
                                 previous->begin, previous->begin + previous->size, tensor.name,
                                 tensor.begin, tensor.begin + tensor.size));
      }
      previous = &tensor;
    }
    return Status();
  }

 private:
  std::string_view label_;
  std::uint64_t data_size_;
};

// Parses the JSON text, reporting a repeated top-level key (the DOM would silently keep the last).
StatusOr<Json> parse_json_object(std::string_view text, std::string_view label) {
  std::set<std::string> seen;
  std::string duplicate;
  auto const on_event = [&](int depth, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::key && depth == 1 && duplicate.empty() &&
        !seen.insert(parsed.get<std::string>()).second) {
      duplicate = parsed.get<std::string>();
    }
    return true;
  };
  Json json;
  try {
    json = Json::parse(text.begin(), text.end(), on_event, /*allow_exceptions=*/false);
  } catch (Json::exception const& e) {
    return invalid_argument_error(fmt::format("{}: header JSON: {}", label, e.what()));
  }
  if (json.is_discarded()) {
    return invalid_argument_error(fmt::format("{}: header is not well-formed JSON", label));
  }
  if (!duplicate.empty()) {
    return invalid_argument_error(
        fmt::format("{}: tensor '{}' appears twice in the header", label, duplicate));
  }
  if (!json.is_object()) {
    return invalid_argument_error(fmt::format("{}: header is not a JSON object", label));
  }
  return json;
}

std::uint64_t decode_header_length(std::span<std::byte const> first_eight) {
  std::uint64_t length = 0;
  for (int i = 7; i >= 0; --i) {
    length =
        (length << 8) | std::to_integer<std::uint64_t>(first_eight[static_cast<std::size_t>(i)]);
  }
  return length;
}

}  // namespace

TensorInfo const* SafetensorsHeader::find(std::string_view name) const {
  for (TensorInfo const& tensor : tensors) {
    if (tensor.name == name) {
      return &tensor;
    }
  }
  return nullptr;
}

std::uint64_t header_prefix_size(std::span<std::byte const> first_eight) {
  // Capped so the sum cannot wrap; an over-limit length is refused by the parser anyway.
  return 8 + std::min(decode_header_length(first_eight), kMaxHeaderBytes + 1);
}

StatusOr<SafetensorsHeader> parse_safetensors_header(std::span<std::byte const> prefix,
                                                     std::uint64_t file_size,
                                                     std::string_view file_label) {
  if (file_size < 8 || prefix.size() < 8) {
    return data_loss_error(fmt::format(
        "{}: file is {} bytes, too short for the 8-byte header length", file_label, file_size));
  }
  std::uint64_t const length = decode_header_length(prefix);
  if (length > kMaxHeaderBytes) {
    return invalid_argument_error(fmt::format("{}: header length {} exceeds the {}-byte limit",
                                              file_label, length, kMaxHeaderBytes));
  }
  if (length > file_size - 8) {
    return data_loss_error(
        fmt::format("{}: header length {} runs past the end of the {}-byte file (truncated?)",
                    file_label, length, file_size));
  }
  if (length < 2) {
    return invalid_argument_error(
        fmt::format("{}: header length {} is too small for a JSON object", file_label, length));
  }
  GCMOE_CHECK_ARG(prefix.size() >= 8 + length, "{}: only {} of the {} header bytes were given",
                  file_label, prefix.size(), 8 + length);

  std::string_view const text(reinterpret_cast<char const*>(prefix.data()) + 8, length);
  if (json_depth(text) > kMaxJsonDepth) {
    return invalid_argument_error(
        fmt::format("{}: header JSON nests deeper than {} levels", file_label, kMaxJsonDepth));
  }
  GCMOE_ASSIGN_OR_RETURN(Json const json, parse_json_object(text, file_label));

  SafetensorsHeader header;
  header.file_size = file_size;
  header.data_offset = 8 + length;
  HeaderParser const parser(file_label, file_size - header.data_offset);
  for (auto const& [key, value] : json.items()) {
    if (key == "__metadata__") {
      GCMOE_RETURN_IF_ERROR(parser.parse_metadata(value, header));
      continue;
    }
    GCMOE_ASSIGN_OR_RETURN(TensorInfo tensor, parser.parse_tensor(key, value));
    tensor.begin += header.data_offset;
    header.tensors.push_back(std::move(tensor));
  }
  GCMOE_RETURN_IF_ERROR(parser.check_overlaps(header.tensors));
  return header;
}

StatusOr<SafetensorsHeader> read_safetensors_header(std::filesystem::path const& path) {
  GCMOE_ASSIGN_OR_RETURN(ReadOnlyFile const file, ReadOnlyFile::open(path));
  std::string const label = path.string();
  std::vector<std::byte> prefix(std::min<std::uint64_t>(8, file.size()));
  GCMOE_RETURN_IF_ERROR(file.read_at(0, prefix));
  if (prefix.size() == 8) {
    std::uint64_t const wanted = std::min(header_prefix_size(prefix), file.size());
    prefix.resize(static_cast<std::size_t>(wanted));
    GCMOE_RETURN_IF_ERROR(file.read_at(0, prefix));
  }
  return parse_safetensors_header(prefix, file.size(), label);
}

}  // namespace gcmoe::checkpoint
