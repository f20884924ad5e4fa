#pragma once
// gcmoe.v1.GenerateService on the front-end. Generate validates a request, claims its id, admits
// it to the least-loaded rank with room (RESOURCE_EXHAUSTED when every rank is full) and relays
// the rank's token stream; the client's cancel and deadline travel to the rank with the call
// (the rank aborts the sequence). A rank fault ends the stream with UNAVAILABLE.

#include <atomic>
#include <string>

#include "gcmoe/v1/generate.grpc.pb.h"
#include "server/frontend/admission.h"
#include "server/frontend/in_flight_table.h"
#include "server/frontend/metrics.h"
#include "server/frontend/rank_group.h"
#include "server/frontend/rank_load_board.h"
#include "server/frontend/request_registry.h"
#include "server/frontend/serving_state.h"

namespace gcmoe::frontend {

struct ServerIdentity {
  std::string version;
  std::uint32_t ranks = 1;
  std::string backend = "cpu";  // cpu | cuda
};

// What the handlers share; owned by FrontendServer.
struct ServiceContext {
  ServingState& state;
  RankLoadBoard& loads;
  RequestRegistry& registry;
  RankGroupSlot& group;
  Admission& admission;
  InFlightTable& in_flight;
  ServingMetrics& metrics;
};

class GenerateServiceImpl final : public v1::GenerateService::Service {
 public:
  GenerateServiceImpl(ServerIdentity identity, ServiceContext context);

  grpc::Status Generate(grpc::ServerContext* context, v1::GenerateRequest const* request,
                        grpc::ServerWriter<v1::GenerateResponse>* writer) override;
  grpc::Status Abort(grpc::ServerContext* context, v1::AbortRequest const* request,
                     v1::AbortResponse* response) override;
  grpc::Status GetModelInfo(grpc::ServerContext* context, v1::GetModelInfoRequest const* request,
                            v1::GetModelInfoResponse* response) override;
  grpc::Status GetServerInfo(grpc::ServerContext* context, v1::GetServerInfoRequest const* request,
                             v1::GetServerInfoResponse* response) override;
  grpc::Status GetLoads(grpc::ServerContext* context, v1::GetLoadsRequest const* request,
                        v1::GetLoadsResponse* response) override;

 private:
  Status generate(grpc::ServerContext& context, v1::GenerateRequest const& request,
                  grpc::ServerWriter<v1::GenerateResponse>& writer);

  ServerIdentity identity_;
  ServiceContext ctx_;
  std::atomic<std::uint64_t> next_sequence_{1};
};

}  // namespace gcmoe::frontend
