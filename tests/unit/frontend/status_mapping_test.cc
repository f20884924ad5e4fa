#include "server/frontend/status_mapping.h"

#include "tests/support/catch.h"

namespace gcmoe::frontend {
namespace {

TEST_CASE("every status code maps 1:1 to gRPC and back, message kept") {
  for (int code = 0; code <= 16; ++code) {
    auto const ours = static_cast<StatusCode>(code);
    Status const status = code == 0 ? Status() : Status(ours, "why");
    grpc::Status const theirs = to_grpc_status(status);
    CHECK(static_cast<int>(theirs.error_code()) == code);
    CHECK(theirs.error_message() == (code == 0 ? "" : "why"));
    CHECK(from_grpc_status(theirs) == status);
  }
  CHECK(to_grpc_status(invalid_argument_error("x")).error_code() ==
        grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(to_grpc_status(resource_exhausted_error("x")).error_code() ==
        grpc::StatusCode::RESOURCE_EXHAUSTED);
  CHECK(to_grpc_status(unavailable_error("x")).error_code() == grpc::StatusCode::UNAVAILABLE);
}

TEST_CASE("a gRPC code outside the known range becomes UNKNOWN") {
  grpc::Status const odd(static_cast<grpc::StatusCode>(42), "future code");
  Status const mapped = from_grpc_status(odd);
  CHECK(mapped.code() == StatusCode::kUnknown);
  CHECK(mapped.message() == "future code");
}

}  // namespace
}  // namespace gcmoe::frontend
