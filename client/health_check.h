#pragma once
// The standard gRPC health check (grpc.health.v1.Health/Check) as a client, for `gcmoe health`
// and container health checks. gcmoe serve answers liveness on service "" and readiness on
// "gcmoe.v1.GenerateService" (SERVING only while a model is loaded and it is not draining).

#include <chrono>
#include <string>

#include "engine/common/status.h"

namespace gcmoe::client {

inline constexpr char kReadinessService[] = "gcmoe.v1.GenerateService";

enum class HealthState {
  kUnknown,
  kServing,
  kNotServing,
  kServiceUnknown,
};

std::string_view health_state_name(HealthState state);

// One Check call with `timeout` as its deadline. A gRPC error (server down, unknown service) is
// returned as its Status; otherwise the reported state.
StatusOr<HealthState> check_health(std::string const& target, std::string const& service,
                                   std::chrono::milliseconds timeout);

// The wire form of HealthCheckRequest{service} and the state in a HealthCheckResponse; exposed
// for tests. Messages are encoded by hand (one field each) so no generated copy of health.proto
// is linked beside the test clients' own.
std::string encode_health_request(std::string const& service);
StatusOr<HealthState> decode_health_response(std::string const& bytes);

}  // namespace gcmoe::client
