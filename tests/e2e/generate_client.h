#pragma once
// A test client of gcmoe.v1 over real gRPC: one Generate stream collected whole, readiness
// polling, and /metrics over HTTP. Shared by the serving e2e tests.

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gcmoe/v1/generate.grpc.pb.h"

namespace gcmoe::testing {

struct StreamResult {
  grpc::Status status;
  std::vector<std::uint32_t> tokens;
  std::optional<v1::Finished> finished;
  int messages = 0;
};

std::shared_ptr<grpc::Channel> connect_channel(std::string const& address);

// Reads the whole stream. `on_delta(count so far, context)` runs after each delta (to cancel).
StreamResult collect_generate(
    v1::GenerateService::Stub& stub, v1::GenerateRequest const& request,
    std::optional<std::chrono::milliseconds> deadline = std::nullopt,
    std::function<void(std::size_t, grpc::ClientContext&)> const& on_delta = nullptr);

// Polls readiness (health of gcmoe.v1.GenerateService) until SERVING or the timeout.
bool wait_ready(std::shared_ptr<grpc::Channel> const& channel, std::chrono::seconds timeout);
// The readiness health status right now: true when SERVING.
bool is_ready(std::shared_ptr<grpc::Channel> const& channel);

// GET http://127.0.0.1:port/metrics; empty on failure.
std::string fetch_metrics(int port);

v1::GenerateRequest make_request(std::string const& id, std::vector<std::uint32_t> const& prompt,
                                 std::uint32_t max_new_tokens, std::optional<std::uint64_t> seed,
                                 std::optional<float> temperature = std::nullopt);

}  // namespace gcmoe::testing
