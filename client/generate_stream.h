#pragma once
// One Generate call over the public API, read to its end: every chunk that carries tokens is
// handed to `on_tokens` with its arrival time, the final message is kept. Shared by the load
// tester (one per in-flight request) and `gcmoe generate`.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "gcmoe/v1/generate.grpc.pb.h"

namespace gcmoe::client {

using Clock = std::chrono::steady_clock;

struct StreamResult {
  grpc::Status status;                   // the stream's final status
  std::optional<v1::Finished> finished;  // the final message, when the server sent one
  std::uint32_t tokens = 0;              // token ids received in deltas
};

using TokenCallback = std::function<void(std::span<std::uint32_t const> tokens, Clock::time_point)>;

// `timeout` is the call's gRPC deadline. A stream that ends OK without a Finished message is
// reported as INTERNAL ("stream ended without a final message"): the protocol promises one.
StreamResult run_generate_stream(v1::GenerateService::Stub& stub,
                                 v1::GenerateRequest const& request,
                                 std::chrono::duration<double> timeout,
                                 TokenCallback const& on_tokens);

// "RESOURCE_EXHAUSTED" for a gRPC status code.
std::string grpc_code_name(grpc::StatusCode code);

// "LENGTH", "STOP_TOKEN", "EOS", "ABORTED", "UNSPECIFIED".
std::string finish_reason_name(v1::FinishReason reason);

}  // namespace gcmoe::client
