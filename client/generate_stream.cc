#include "client/generate_stream.h"

#include <grpcpp/client_context.h>

#include "engine/common/status.h"

namespace gcmoe::client {

StreamResult run_generate_stream(v1::GenerateService::Stub& stub,
                                 v1::GenerateRequest const& request,
                                 std::chrono::duration<double> timeout,
                                 TokenCallback const& on_tokens) {
  StreamResult result;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::duration_cast<std::chrono::microseconds>(timeout));
  std::unique_ptr<grpc::ClientReader<v1::GenerateResponse>> reader =
      stub.Generate(&context, request);
  v1::GenerateResponse response;
  while (reader->Read(&response)) {
    Clock::time_point const now = Clock::now();
    if (response.has_delta() && response.delta().token_ids_size() > 0) {
      auto const& ids = response.delta().token_ids();
      result.tokens += static_cast<std::uint32_t>(ids.size());
      if (on_tokens) {
        on_tokens(std::span<std::uint32_t const>(ids.data(), static_cast<std::size_t>(ids.size())),
                  now);
      }
    } else if (response.has_finished()) {
      result.finished = response.finished();
    }
  }
  result.status = reader->Finish();
  if (result.status.ok() && !result.finished) {
    result.status =
        grpc::Status(grpc::StatusCode::INTERNAL, "stream ended without a final (finished) message");
  }
  return result;
}

std::string grpc_code_name(grpc::StatusCode code) {
  // gcmoe::StatusCode numbers the codes as gRPC does (engine/common/status.h).
  return std::string(status_code_name(static_cast<StatusCode>(code)));
}

std::string finish_reason_name(v1::FinishReason reason) {
  switch (reason) {
    case v1::FINISH_REASON_LENGTH:
      return "LENGTH";
    case v1::FINISH_REASON_STOP_TOKEN:
      return "STOP_TOKEN";
    case v1::FINISH_REASON_EOS:
      return "EOS";
    case v1::FINISH_REASON_ABORTED:
      return "ABORTED";
    case v1::FINISH_REASON_UNSPECIFIED:
      return "UNSPECIFIED";
    default:  // proto3 open enums: values this client was not built with
      return "UNKNOWN(" + std::to_string(static_cast<int>(reason)) + ")";
  }
}

}  // namespace gcmoe::client
