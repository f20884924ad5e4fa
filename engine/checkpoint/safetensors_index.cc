#include "engine/checkpoint/safetensors_index.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "engine/common/check.h"

namespace gcmoe::checkpoint {
namespace {

using Json = nlohmann::json;

bool is_plain_file_name(std::string const& name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find_first_of(std::string_view("/\\\0", 3)) == std::string::npos;
}

}  // namespace

StatusOr<ShardIndex> parse_safetensors_index(std::string_view json_text, std::string_view label) {
  auto const fail = [&](std::string const& what) {
    return invalid_argument_error(fmt::format("{}: {}", label, what));
  };
  // The DOM keeps only the last of repeated keys; a tensor mapped twice must be an error.
  std::string section;
  std::set<std::string> mapped;
  std::string duplicate;
  auto const on_event = [&](int depth, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::key && depth == 1) {
      section = parsed.get<std::string>();
    } else if (event == Json::parse_event_t::key && depth == 2 && section == "weight_map" &&
               duplicate.empty() && !mapped.insert(parsed.get<std::string>()).second) {
      duplicate = parsed.get<std::string>();
    }
    return true;
  };
  Json json;
  try {
    json = Json::parse(json_text.begin(), json_text.end(), on_event, /*allow_exceptions=*/false);
  } catch (Json::exception const& e) {
    return fail(fmt::format("JSON: {}", e.what()));
  }
  if (json.is_discarded() || !json.is_object()) {
    return fail("not a well-formed JSON object");
  }
  if (!duplicate.empty()) {
    return fail(fmt::format("weight_map names tensor '{}' twice", duplicate));
  }

  ShardIndex index;
  if (auto const metadata = json.find("metadata"); metadata != json.end()) {
    if (!metadata->is_object()) {
      return fail("'metadata' is not an object");
    }
    if (auto const total = metadata->find("total_size"); total != metadata->end()) {
      if (!total->is_number_integer() || total->get<std::int64_t>() < 0) {
        return fail(
            fmt::format("metadata.total_size {} is not a non-negative integer", total->dump()));
      }
      index.total_size = total->get<std::int64_t>();
    }
  }
  auto const weight_map = json.find("weight_map");
  if (weight_map == json.end() || !weight_map->is_object()) {
    return fail("missing 'weight_map' object");
  }
  std::map<std::string, std::size_t> shard_position;
  for (auto const& [name, file] : weight_map->items()) {
    if (!file.is_string() || !is_plain_file_name(file.get<std::string>())) {
      return fail(
          fmt::format("weight_map['{}'] = {} is not a plain shard file name", name, file.dump()));
    }
    auto const [it, added] =
        shard_position.emplace(file.get<std::string>(), index.shard_files.size());
    if (added) {
      index.shard_files.push_back(it->first);
    }
    index.weight_map.emplace(name, it->second);
  }
  return index;
}

}  // namespace gcmoe::checkpoint
