#pragma once
// One status type for the whole engine. Codes and numbering match grpc::StatusCode so the RPC
// layer maps them 1:1; exceptions never cross the engine boundary, Status does.

#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace gcmoe {

enum class StatusCode : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

// The gRPC spelling of a code, e.g. "INVALID_ARGUMENT".
std::string_view status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok_status() { return {}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  std::string const& message() const { return message_; }
  // "INVALID_ARGUMENT: message", or "OK".
  std::string to_string() const;
  // Prefixes the message with what was being done ("loading shard 3: ..."); OK stays OK.
  Status with_context(std::string_view context) const;

  friend bool operator==(Status const& a, Status const& b) = default;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

Status invalid_argument_error(std::string message);
Status not_found_error(std::string message);
Status failed_precondition_error(std::string message);
Status out_of_range_error(std::string message);
Status resource_exhausted_error(std::string message);
Status unimplemented_error(std::string message);
Status internal_error(std::string message);
Status unavailable_error(std::string message);
Status data_loss_error(std::string message);
Status cancelled_error(std::string message);
Status deadline_exceeded_error(std::string message);

// A value or the Status saying why there is none. Constructing from an OK Status is a bug and
// becomes an INTERNAL error.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : state_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  StatusOr(Status status) : state_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    if (std::get<Status>(state_).ok()) {
      state_ = internal_error("StatusOr constructed from an OK status without a value");
    }
  }

  bool ok() const { return std::holds_alternative<T>(state_); }
  Status status() const { return ok() ? Status() : std::get<Status>(state_); }

  T& value() & { return std::get<T>(state_); }
  T const& value() const& { return std::get<T>(state_); }
  // On a temporary the value is moved out by value, so `for (x : *make())` and
  // `auto&& v = make().value()` never refer into a destroyed StatusOr.
  T value() && { return std::get<T>(std::move(state_)); }
  T* operator->() { return &value(); }
  T const* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  T const& operator*() const& { return value(); }
  T operator*() && { return std::move(*this).value(); }

 private:
  std::variant<Status, T> state_;
};

}  // namespace gcmoe
