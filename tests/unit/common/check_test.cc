#include "engine/common/check.h"

#include <string>

#include "tests/support/catch.h"

namespace gcmoe {
namespace {

Status needs_positive(int value) {
  GCMOE_CHECK_ARG(value > 0, "value must be positive, got {}", value);
  return Status();
}

StatusOr<int> doubled(int value) {
  GCMOE_RETURN_IF_ERROR(needs_positive(value));
  return 2 * value;
}

StatusOr<int> quadrupled(int value) {
  GCMOE_ASSIGN_OR_RETURN(int const twice, doubled(value));
  return 2 * twice;
}

TEST_CASE("GCMOE_CHECK_ARG names the value and the source location") {
  Status const status = needs_positive(-3);
  REQUIRE(status.code() == StatusCode::kInvalidArgument);
  CHECK(status.message().find("got -3") != std::string::npos);
  CHECK(status.message().find("check_test.cc:") != std::string::npos);
  CHECK(needs_positive(1).ok());
}

TEST_CASE("return and assign macros propagate the first error") {
  REQUIRE(quadrupled(5).ok());
  CHECK(*quadrupled(5) == 20);
  StatusOr<int> const failed = quadrupled(0);
  CHECK(failed.status().code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gcmoe
