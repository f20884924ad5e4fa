#pragma once
// Typed reads of one JSON object of a config file. Every error names the field by its full path
// ("text_config.num_experts_per_tok") and says what was wrong with it.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"

namespace gcmoe::config {

class JsonFields {
 public:
  // `object` must outlive this view; `path` is its prefix in errors ("" for the root).
  JsonFields(nlohmann::json const& object, std::string label, std::string path);

  // Present and not null.
  bool has(std::string_view key) const;
  std::string field_path(std::string_view key) const;
  // INVALID_ARGUMENT "<label>: field '<path>' <what>".
  Status field_error(std::string_view key, std::string_view what) const;

  StatusOr<std::int64_t> get_int(std::string_view key) const;
  StatusOr<std::int64_t> get_int_or(std::string_view key, std::int64_t fallback) const;
  StatusOr<double> get_double(std::string_view key) const;
  StatusOr<double> get_double_or(std::string_view key, double fallback) const;
  StatusOr<bool> get_bool(std::string_view key) const;
  StatusOr<bool> get_bool_or(std::string_view key, bool fallback) const;
  StatusOr<std::string> get_string(std::string_view key) const;
  StatusOr<std::optional<std::string>> get_optional_string(std::string_view key) const;
  // An array of integers; absent gives an empty list.
  StatusOr<std::vector<std::int64_t>> get_int_list_or_empty(std::string_view key) const;
  StatusOr<std::vector<std::string>> get_string_list_or_empty(std::string_view key) const;
  // A nested object, or nullopt when absent or null.
  StatusOr<std::optional<JsonFields>> get_optional_object(std::string_view key) const;

 private:
  // The value of `key` (which must be present).
  nlohmann::json const& at(std::string_view key) const;

  nlohmann::json const* object_;
  std::string label_;
  std::string path_;
};

}  // namespace gcmoe::config
