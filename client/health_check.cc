#include "client/health_check.h"

#include <fmt/format.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/byte_buffer.h>

#include "engine/common/check.h"

namespace gcmoe::client {
namespace {

constexpr char kCheckMethod[] = "/grpc.health.v1.Health/Check";

void append_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}

}  // namespace

std::string_view health_state_name(HealthState state) {
  switch (state) {
    case HealthState::kUnknown:
      return "UNKNOWN";
    case HealthState::kServing:
      return "SERVING";
    case HealthState::kNotServing:
      return "NOT_SERVING";
    case HealthState::kServiceUnknown:
      return "SERVICE_UNKNOWN";
  }
  return "UNKNOWN";
}

std::string encode_health_request(std::string const& service) {
  std::string out;
  if (!service.empty()) {
    out += '\x0a';  // field 1, length-delimited
    append_varint(out, service.size());
    out += service;
  }
  return out;
}

StatusOr<HealthState> decode_health_response(std::string const& bytes) {
  // HealthCheckResponse has one field: 1 status (enum, varint); absent means 0 = UNKNOWN.
  std::uint64_t status = 0;
  std::size_t at = 0;
  while (at < bytes.size()) {
    auto const key = static_cast<unsigned char>(bytes[at++]);
    GCMOE_CHECK_ARG(key == 0x08, "health response: unexpected field key 0x{:02x}", key);
    std::uint64_t value = 0;
    int shift = 0;
    while (true) {
      GCMOE_CHECK_ARG(at < bytes.size() && shift < 64, "health response: truncated varint");
      auto const byte = static_cast<unsigned char>(bytes[at++]);
      value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      shift += 7;
      if ((byte & 0x80) == 0) {
        break;
      }
    }
    status = value;
  }
  switch (status) {
    case 0:
      return HealthState::kUnknown;
    case 1:
      return HealthState::kServing;
    case 2:
      return HealthState::kNotServing;
    case 3:
      return HealthState::kServiceUnknown;
    default:
      return invalid_argument_error(fmt::format("health response: unknown status {}", status));
  }
}

StatusOr<HealthState> check_health(std::string const& target, std::string const& service,
                                   std::chrono::milliseconds timeout) {
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateChannel(target, grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  context.set_wait_for_ready(true);  // a server still starting is waited for, up to the deadline

  std::string const payload = encode_health_request(service);
  grpc::Slice slice(payload);
  grpc::ByteBuffer request(&slice, 1);
  grpc::CompletionQueue queue;
  std::unique_ptr<grpc::ClientAsyncResponseReader<grpc::ByteBuffer>> call =
      stub.PrepareUnaryCall(&context, kCheckMethod, request, &queue);
  call->StartCall();
  grpc::ByteBuffer response;
  grpc::Status status;
  int tag = 0;
  call->Finish(&response, &status, &tag);
  void* got_tag = nullptr;
  bool ok = false;
  GCMOE_CHECK_INTERNAL(queue.Next(&got_tag, &ok) && got_tag == &tag, "health check: no completion");
  queue.Shutdown();
  while (queue.Next(&got_tag, &ok)) {
  }
  if (!status.ok()) {
    return Status(
        static_cast<StatusCode>(status.error_code()),
        fmt::format("health check of '{}' at {}: {}", service, target, status.error_message()));
  }
  std::vector<grpc::Slice> slices;
  GCMOE_CHECK_INTERNAL(response.Dump(&slices).ok(), "health check: unreadable response");
  std::string bytes;
  for (grpc::Slice const& s : slices) {
    bytes.append(reinterpret_cast<char const*>(s.begin()), s.size());
  }
  return decode_health_response(bytes);
}

}  // namespace gcmoe::client
