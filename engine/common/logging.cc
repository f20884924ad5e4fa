#include "engine/common/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <array>
#include <cstdlib>
#include <string>

namespace gcmoe {

Status init_logging(std::string_view flag_level) {
  std::string level(flag_level);
  if (level.empty()) {
    char const* env = std::getenv(kLogLevelEnv);
    level = env != nullptr ? env : "info";
  }
  static constexpr std::array<std::string_view, 7> kNames = {"trace", "debug",    "info", "warn",
                                                             "error", "critical", "off"};
  bool known = false;
  for (auto const name : kNames) {
    known = known || name == level;
  }
  if (!known) {
    return invalid_argument_error("unknown log level '" + level +
                                  "' (trace, debug, info, warn, error, critical, off)");
  }
  // Logs go to stderr so stdout stays clean for command output (tables, JSON).
  auto logger = spdlog::get("gcmoe");
  if (logger == nullptr) {
    logger = spdlog::stderr_color_mt("gcmoe");
  }
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(level));
  spdlog::set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ [%n] %v");
  return Status();
}

}  // namespace gcmoe
