#include "server/frontend/status_mapping.h"

namespace gcmoe::frontend {
namespace {

constexpr bool same_code(StatusCode ours, grpc::StatusCode theirs) {
  return static_cast<int>(ours) == static_cast<int>(theirs);
}

static_assert(same_code(StatusCode::kOk, grpc::StatusCode::OK));
static_assert(same_code(StatusCode::kCancelled, grpc::StatusCode::CANCELLED));
static_assert(same_code(StatusCode::kUnknown, grpc::StatusCode::UNKNOWN));
static_assert(same_code(StatusCode::kInvalidArgument, grpc::StatusCode::INVALID_ARGUMENT));
static_assert(same_code(StatusCode::kDeadlineExceeded, grpc::StatusCode::DEADLINE_EXCEEDED));
static_assert(same_code(StatusCode::kNotFound, grpc::StatusCode::NOT_FOUND));
static_assert(same_code(StatusCode::kAlreadyExists, grpc::StatusCode::ALREADY_EXISTS));
static_assert(same_code(StatusCode::kPermissionDenied, grpc::StatusCode::PERMISSION_DENIED));
static_assert(same_code(StatusCode::kResourceExhausted, grpc::StatusCode::RESOURCE_EXHAUSTED));
static_assert(same_code(StatusCode::kFailedPrecondition, grpc::StatusCode::FAILED_PRECONDITION));
static_assert(same_code(StatusCode::kAborted, grpc::StatusCode::ABORTED));
static_assert(same_code(StatusCode::kOutOfRange, grpc::StatusCode::OUT_OF_RANGE));
static_assert(same_code(StatusCode::kUnimplemented, grpc::StatusCode::UNIMPLEMENTED));
static_assert(same_code(StatusCode::kInternal, grpc::StatusCode::INTERNAL));
static_assert(same_code(StatusCode::kUnavailable, grpc::StatusCode::UNAVAILABLE));
static_assert(same_code(StatusCode::kDataLoss, grpc::StatusCode::DATA_LOSS));
static_assert(same_code(StatusCode::kUnauthenticated, grpc::StatusCode::UNAUTHENTICATED));

}  // namespace

grpc::Status to_grpc_status(Status const& status) {
  if (status.ok()) {
    return grpc::Status::OK;
  }
  return {static_cast<grpc::StatusCode>(status.code()), status.message()};
}

Status from_grpc_status(grpc::Status const& status) {
  if (status.ok()) {
    return Status();
  }
  // gRPC codes outside 1..16 (none exist today) would not be ours: UNKNOWN keeps the message.
  int const code = static_cast<int>(status.error_code());
  if (code < static_cast<int>(StatusCode::kCancelled) ||
      code > static_cast<int>(StatusCode::kUnauthenticated)) {
    return {StatusCode::kUnknown, status.error_message()};
  }
  return {static_cast<StatusCode>(code), status.error_message()};
}

}  // namespace gcmoe::frontend
