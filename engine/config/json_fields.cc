#include "engine/config/json_fields.h"

#include <fmt/format.h>

#include <utility>

namespace gcmoe::config {

JsonFields::JsonFields(nlohmann::json const& object, std::string label, std::string path)
    : object_(&object), label_(std::move(label)), path_(std::move(path)) {}

bool JsonFields::has(std::string_view key) const {
  auto const it = object_->find(key);
  return it != object_->end() && !it->is_null();
}

std::string JsonFields::field_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
}

Status JsonFields::field_error(std::string_view key, std::string_view what) const {
  return invalid_argument_error(fmt::format("{}: field '{}' {}", label_, field_path(key), what));
}

nlohmann::json const& JsonFields::at(std::string_view key) const {
  return *object_->find(key);
}

StatusOr<std::int64_t> JsonFields::get_int(std::string_view key) const {
  if (!has(key)) {
    return field_error(key, "is missing");
  }
  nlohmann::json const& value = at(key);
  if (!value.is_number_integer() ||
      (value.is_number_unsigned() && value.get<std::uint64_t>() > INT64_MAX)) {
    return field_error(key, fmt::format("must be an integer, got {}", value.dump()));
  }
  return value.get<std::int64_t>();
}

StatusOr<std::int64_t> JsonFields::get_int_or(std::string_view key, std::int64_t fallback) const {
  return has(key) ? get_int(key) : StatusOr<std::int64_t>(fallback);
}

StatusOr<double> JsonFields::get_double(std::string_view key) const {
  if (!has(key)) {
    return field_error(key, "is missing");
  }
  nlohmann::json const& value = at(key);
  if (!value.is_number()) {
    return field_error(key, fmt::format("must be a number, got {}", value.dump()));
  }
  return value.get<double>();
}

StatusOr<double> JsonFields::get_double_or(std::string_view key, double fallback) const {
  return has(key) ? get_double(key) : StatusOr<double>(fallback);
}

StatusOr<bool> JsonFields::get_bool(std::string_view key) const {
  if (!has(key)) {
    return field_error(key, "is missing");
  }
  nlohmann::json const& value = at(key);
  if (!value.is_boolean()) {
    return field_error(key, fmt::format("must be true or false, got {}", value.dump()));
  }
  return value.get<bool>();
}

StatusOr<bool> JsonFields::get_bool_or(std::string_view key, bool fallback) const {
  return has(key) ? get_bool(key) : StatusOr<bool>(fallback);
}

StatusOr<std::string> JsonFields::get_string(std::string_view key) const {
  if (!has(key)) {
    return field_error(key, "is missing");
  }
  nlohmann::json const& value = at(key);
  if (!value.is_string()) {
    return field_error(key, fmt::format("must be a string, got {}", value.dump()));
  }
  return value.get<std::string>();
}

StatusOr<std::optional<std::string>> JsonFields::get_optional_string(std::string_view key) const {
  if (!has(key)) {
    return std::optional<std::string>();
  }
  auto value = get_string(key);
  if (!value.ok()) {
    return value.status();
  }
  return std::optional<std::string>(std::move(value).value());
}

StatusOr<std::vector<std::int64_t>> JsonFields::get_int_list_or_empty(std::string_view key) const {
  std::vector<std::int64_t> out;
  if (!has(key)) {
    return out;
  }
  nlohmann::json const& value = at(key);
  if (!value.is_array()) {
    return field_error(key, fmt::format("must be a list of integers, got {}", value.dump()));
  }
  for (nlohmann::json const& item : value) {
    if (!item.is_number_integer()) {
      return field_error(key, fmt::format("must hold only integers, found {}", item.dump()));
    }
    out.push_back(item.get<std::int64_t>());
  }
  return out;
}

StatusOr<std::vector<std::string>> JsonFields::get_string_list_or_empty(
    std::string_view key) const {
  std::vector<std::string> out;
  if (!has(key)) {
    return out;
  }
  nlohmann::json const& value = at(key);
  if (!value.is_array()) {
    return field_error(key, fmt::format("must be a list of strings, got {}", value.dump()));
  }
  for (nlohmann::json const& item : value) {
    if (!item.is_string()) {
      return field_error(key, fmt::format("must hold only strings, found {}", item.dump()));
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

StatusOr<std::optional<JsonFields>> JsonFields::get_optional_object(std::string_view key) const {
  if (!has(key)) {
    return std::optional<JsonFields>();
  }
  nlohmann::json const& value = at(key);
  if (!value.is_object()) {
    return field_error(key, fmt::format("must be an object, got {}", value.dump()));
  }
  return std::optional<JsonFields>(JsonFields(value, label_, field_path(key)));
}

}  // namespace gcmoe::config
