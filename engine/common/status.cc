#include "engine/common/status.h"

#include <fmt/format.h>

#include "engine/common/check.h"

namespace gcmoe {

std::string_view status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kCancelled:
      return "CANCELLED";
    case StatusCode::kUnknown:
      return "UNKNOWN";
    case StatusCode::kInvalidArgument:
      return "INVALID_ARGUMENT";
    case StatusCode::kDeadlineExceeded:
      return "DEADLINE_EXCEEDED";
    case StatusCode::kNotFound:
      return "NOT_FOUND";
    case StatusCode::kAlreadyExists:
      return "ALREADY_EXISTS";
    case StatusCode::kPermissionDenied:
      return "PERMISSION_DENIED";
    case StatusCode::kResourceExhausted:
      return "RESOURCE_EXHAUSTED";
    case StatusCode::kFailedPrecondition:
      return "FAILED_PRECONDITION";
    case StatusCode::kAborted:
      return "ABORTED";
    case StatusCode::kOutOfRange:
      return "OUT_OF_RANGE";
    case StatusCode::kUnimplemented:
      return "UNIMPLEMENTED";
    case StatusCode::kInternal:
      return "INTERNAL";
    case StatusCode::kUnavailable:
      return "UNAVAILABLE";
    case StatusCode::kDataLoss:
      return "DATA_LOSS";
    case StatusCode::kUnauthenticated:
      return "UNAUTHENTICATED";
  }
  return "UNKNOWN";
}

std::string Status::to_string() const {
  if (ok()) {
    return "OK";
  }
  std::string text(status_code_name(code_));
  text += ": ";
  text += message_;
  return text;
}

Status Status::with_context(std::string_view context) const {
  if (ok()) {
    return *this;
  }
  std::string message(context);
  message += ": ";
  message += message_;
  return {code_, std::move(message)};
}

Status invalid_argument_error(std::string message) {
  return {StatusCode::kInvalidArgument, std::move(message)};
}
Status not_found_error(std::string message) {
  return {StatusCode::kNotFound, std::move(message)};
}
Status failed_precondition_error(std::string message) {
  return {StatusCode::kFailedPrecondition, std::move(message)};
}
Status out_of_range_error(std::string message) {
  return {StatusCode::kOutOfRange, std::move(message)};
}
Status resource_exhausted_error(std::string message) {
  return {StatusCode::kResourceExhausted, std::move(message)};
}
Status unimplemented_error(std::string message) {
  return {StatusCode::kUnimplemented, std::move(message)};
}
Status internal_error(std::string message) {
  return {StatusCode::kInternal, std::move(message)};
}
Status unavailable_error(std::string message) {
  return {StatusCode::kUnavailable, std::move(message)};
}
Status data_loss_error(std::string message) {
  return {StatusCode::kDataLoss, std::move(message)};
}
Status cancelled_error(std::string message) {
  return {StatusCode::kCancelled, std::move(message)};
}
Status deadline_exceeded_error(std::string message) {
  return {StatusCode::kDeadlineExceeded, std::move(message)};
}

namespace detail {
std::string at_location(std::string const& message, char const* file, int line) {
  return fmt::format("{} [{}:{}]", message, file, line);
}
}  // namespace detail

}  // namespace gcmoe
