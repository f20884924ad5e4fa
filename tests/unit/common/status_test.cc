#include "engine/common/status.h"

#include <vector>

#include "tests/support/catch.h"

namespace gcmoe {
namespace {

TEST_CASE("status codes carry gRPC's numbering and names") {
  // The RPC layer casts StatusCode to grpc::StatusCode; these values are gRPC's.
  CHECK(static_cast<int>(StatusCode::kInvalidArgument) == 3);
  CHECK(static_cast<int>(StatusCode::kResourceExhausted) == 8);
  CHECK(static_cast<int>(StatusCode::kUnavailable) == 14);
  CHECK(static_cast<int>(StatusCode::kUnauthenticated) == 16);
  CHECK(status_code_name(StatusCode::kDeadlineExceeded) == "DEADLINE_EXCEEDED");
  CHECK(status_code_name(StatusCode::kDataLoss) == "DATA_LOSS");
}

TEST_CASE("status formats and adds context") {
  Status const ok;
  CHECK(ok.ok());
  CHECK(ok.to_string() == "OK");
  CHECK(ok.with_context("loading").ok());

  Status const bad = not_found_error("shard 3 missing");
  CHECK_FALSE(bad.ok());
  CHECK(bad.code() == StatusCode::kNotFound);
  CHECK(bad.to_string() == "NOT_FOUND: shard 3 missing");
  CHECK(bad.with_context("loading model").message() == "loading model: shard 3 missing");
}

StatusOr<std::vector<int>> make_values() {
  return std::vector<int>{1, 2, 3};
}

TEST_CASE("a temporary StatusOr gives its value by value (safe in range-for)") {
  int sum = 0;
  for (int const v : *make_values()) {  // the vector outlives the loop, not the StatusOr
    sum += v;
  }
  CHECK(sum == 6);
  std::vector<int> const moved = make_values().value();
  CHECK(moved.size() == 3u);
}

TEST_CASE("StatusOr holds a value or a status") {
  StatusOr<int> const value = 7;
  REQUIRE(value.ok());
  CHECK(*value == 7);
  CHECK(value.status().ok());

  StatusOr<int> const error = invalid_argument_error("no");
  CHECK_FALSE(error.ok());
  CHECK(error.status().code() == StatusCode::kInvalidArgument);

  // An OK status is not a value: it turns into INTERNAL instead of an empty success.
  StatusOr<int> const misuse = Status();
  CHECK_FALSE(misuse.ok());
  CHECK(misuse.status().code() == StatusCode::kInternal);
}

}  // namespace
}  // namespace gcmoe
