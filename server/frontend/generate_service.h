#pragma once
// gcmoe.v1.GenerateService on the front-end. What needs no model is real: request validation,
// request-id claims, server info and loads, drain refusal. Generation itself needs a model
// family (issue 8): until one is loaded, Generate, Abort and GetModelInfo answer UNAVAILABLE
// naming what is missing — never fake tokens.

#include <string>

#include "gcmoe/v1/generate.grpc.pb.h"
#include "server/frontend/rank_load_board.h"
#include "server/frontend/request_registry.h"
#include "server/frontend/serving_state.h"

namespace gcmoe::frontend {

struct ServerIdentity {
  std::string version;
  std::uint32_t ranks = 1;
  std::string backend = "cpu";  // cpu | cuda
};

class GenerateServiceImpl final : public v1::GenerateService::Service {
 public:
  GenerateServiceImpl(ServerIdentity identity, ServingState& state, RankLoadBoard& loads,
                      RequestRegistry& registry);

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
  Status generate(v1::GenerateRequest const& request);

  ServerIdentity identity_;
  ServingState& state_;
  RankLoadBoard& loads_;
  RequestRegistry& registry_;
};

}  // namespace gcmoe::frontend
