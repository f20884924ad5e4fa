#include "engine/tiny/ensure_tiny_model.h"

#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>

#include "engine/checkpoint/safetensors_writer.h"
#include "engine/common/check.h"
#include "engine/tiny/make_tiny.h"

namespace gcmoe::tiny {
namespace {

// Written last: its presence with the right seed means the directory is complete.
constexpr char kSeedMarker[] = "tiny_seed.txt";

StatusOr<nlohmann::json> read_json(std::filesystem::path const& path) {
  std::ifstream in(path);
  if (!in) {
    return not_found_error(fmt::format("cannot open {}", path.string()));
  }
  nlohmann::json value = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  GCMOE_CHECK_ARG(!value.is_discarded(), "{} is not valid JSON", path.string());
  return value;
}

bool is_current(std::filesystem::path const& dir, nlohmann::json const& config,
                std::uint64_t const seed) {
  std::ifstream marker(dir / kSeedMarker);
  std::uint64_t written_seed = 0;
  if (!(marker >> written_seed) || written_seed != seed ||
      !std::filesystem::exists(dir / checkpoint::kIndexFileName)) {
    return false;
  }
  auto const written = read_json(dir / "config.json");
  return written.ok() && *written == config;
}

}  // namespace

StatusOr<std::filesystem::path> ensure_tiny_model(std::filesystem::path const& config_path,
                                                  std::filesystem::path const& dir,
                                                  std::uint64_t const seed) {
  GCMOE_ASSIGN_OR_RETURN(nlohmann::json const config, read_json(config_path));
  if (is_current(dir, config, seed)) {
    return dir;
  }
  std::filesystem::path const staging =
      dir.parent_path() / fmt::format(".{}.tmp-{}", dir.filename().string(), ::getpid());
  std::error_code error;
  std::filesystem::remove_all(staging, error);
  GCMOE_RETURN_IF_ERROR(write_tiny_model(config, staging, seed).status());
  {
    std::ofstream marker(staging / kSeedMarker, std::ios::trunc);
    marker << seed << '\n';
    if (!marker) {
      return data_loss_error(fmt::format("writing {} failed", (staging / kSeedMarker).string()));
    }
  }
  std::filesystem::remove_all(dir, error);
  std::filesystem::rename(staging, dir, error);
  if (error) {
    return unavailable_error(
        fmt::format("cannot move {} to {}: {}", staging.string(), dir.string(), error.message()));
  }
  return dir;
}

}  // namespace gcmoe::tiny
