#pragma once
// spdlog setup shared by every gcmoe process. Level precedence: the --log-level flag, then
// GCMOE_LOG_LEVEL, then "info". Levels: trace, debug, info, warn, error, critical, off.

#include <string_view>

#include "engine/common/status.h"

namespace gcmoe {

inline constexpr char kLogLevelEnv[] = "GCMOE_LOG_LEVEL";

// `flag_level` empty means "not given on the command line". Unknown names are INVALID_ARGUMENT.
Status init_logging(std::string_view flag_level);

}  // namespace gcmoe
