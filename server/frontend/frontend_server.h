#pragma once
// The front-end's gRPC server: gcmoe.v1.GenerateService, grpc.health.v1 (liveness "" is SERVING
// while the process runs; readiness, the service name, is SERVING only while ready and not
// draining) and server reflection (grpc.reflection.v1alpha). It owns the serving state, the
// request registry and the rank load board the service reads.

#include <grpcpp/server.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "engine/common/status.h"
#include "server/frontend/admission.h"
#include "server/frontend/generate_service.h"
#include "server/frontend/in_flight_table.h"
#include "server/frontend/metrics.h"
#include "server/frontend/rank_group.h"
#include "server/frontend/rank_load_board.h"
#include "server/frontend/request_registry.h"
#include "server/frontend/serving_state.h"

namespace gcmoe::frontend {

// The health-check name of readiness: the service's full name.
std::string readiness_service_name();

struct FrontendConfig {
  std::string listen_address = "0.0.0.0:50051";  // host:port; port 0 picks a free one
  ServerIdentity identity;
  std::string not_ready_reason = kNoModelMessage;
  // Requests in flight per rank (its running + waiting limits); more are RESOURCE_EXHAUSTED.
  std::int32_t per_rank_capacity = 320;
};

class FrontendServer {
 public:
  // Binds and starts serving. UNAVAILABLE when the address cannot be bound.
  static StatusOr<std::unique_ptr<FrontendServer>> start(FrontendConfig const& config);
  ~FrontendServer();
  FrontendServer(FrontendServer const&) = delete;
  FrontendServer& operator=(FrontendServer const&) = delete;

  int port() const { return port_; }
  ServingState& state() { return state_; }
  RankLoadBoard& loads() { return loads_; }
  RequestRegistry& registry() { return registry_; }
  RankGroupSlot& group() { return group_; }
  Admission& admission() { return *admission_; }
  ServingMetrics& metrics() { return metrics_; }
  InFlightTable& in_flight() { return in_flight_; }

  // Readiness NOT_SERVING and new requests UNAVAILABLE at once; then waits up to `grace` for the
  // requests in flight to end, cancels what is left (its ranks abort it) and shuts down.
  void drain_and_shutdown(std::chrono::milliseconds grace);

 private:
  FrontendServer(FrontendConfig const& config, std::unique_ptr<Admission> admission);

  ServingState state_;
  RankLoadBoard loads_;
  RequestRegistry registry_;
  RankGroupSlot group_;
  std::unique_ptr<Admission> admission_;
  InFlightTable in_flight_;
  ServingMetrics metrics_;
  GenerateServiceImpl service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  bool shut_down_ = false;
};

}  // namespace gcmoe::frontend
