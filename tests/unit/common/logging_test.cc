#include "engine/common/logging.h"

#include <spdlog/spdlog.h>

#include "tests/support/catch.h"

namespace gcmoe {
namespace {

TEST_CASE("log level comes from the flag and rejects unknown names") {
  REQUIRE(init_logging("debug").ok());
  CHECK(spdlog::get_level() == spdlog::level::debug);
  REQUIRE(init_logging("warn").ok());  // A second call reuses the logger.
  CHECK(spdlog::get_level() == spdlog::level::warn);
  Status const bad = init_logging("loud");
  CHECK(bad.code() == StatusCode::kInvalidArgument);
  CHECK(bad.message().find("loud") != std::string::npos);
}

}  // namespace
}  // namespace gcmoe
