#include "server/frontend/frontend_server.h"

#include <fmt/format.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <spdlog/spdlog.h>

#include <thread>

#include "engine/common/check.h"

namespace gcmoe::frontend {
namespace {

// Poll period while draining: in-flight requests end on their own schedule, no signal to wait on.
constexpr std::chrono::milliseconds kDrainPoll{10};

}  // namespace

std::string readiness_service_name() {
  return v1::GenerateService::service_full_name();
}

FrontendServer::FrontendServer(FrontendConfig const& config, std::unique_ptr<Admission> admission)
    : state_(config.not_ready_reason),
      loads_(config.identity.ranks),
      admission_(std::move(admission)),
      service_(config.identity,
               {state_, loads_, registry_, group_, *admission_, in_flight_, metrics_}) {}

StatusOr<std::unique_ptr<FrontendServer>> FrontendServer::start(FrontendConfig const& config) {
  // Both are process-wide switches read by the builder; idempotent.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();

  GCMOE_ASSIGN_OR_RETURN(std::unique_ptr<Admission> admission,
                         Admission::create(config.identity.ranks, config.per_rank_capacity));
  std::unique_ptr<FrontendServer> self(new FrontendServer(config, std::move(admission)));
  grpc::ServerBuilder builder;
  // gRPC sets SO_REUSEPORT by default on Linux: a second server on the same port would silently
  // share its traffic. A port in use must be an error instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddListeningPort(config.listen_address, grpc::InsecureServerCredentials(), &self->port_);
  builder.RegisterService(&self->service_);
  self->server_ = builder.BuildAndStart();
  if (self->server_ == nullptr || self->port_ == 0) {
    return unavailable_error(fmt::format("could not listen on {}", config.listen_address));
  }
  grpc::HealthCheckServiceInterface* health = self->server_->GetHealthCheckService();
  if (health == nullptr) {
    return internal_error("the default health check service is not running");
  }
  health->SetServingStatus("", true);  // liveness
  self->state_.set_readiness_listener(
      [health](bool serving) { health->SetServingStatus(readiness_service_name(), serving); });
  spdlog::info("gcmoe front-end listening on port {} ({}), readiness: {}", self->port_,
               config.listen_address, self->state_.snapshot().message);
  return self;
}

void FrontendServer::drain_and_shutdown(std::chrono::milliseconds grace) {
  if (shut_down_) {
    return;
  }
  state_.begin_drain();
  auto const deadline = std::chrono::steady_clock::now() + grace;
  while (registry_.size() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(kDrainPoll);
  }
  std::size_t const left = in_flight_.cancel_all();
  spdlog::info("gcmoe front-end drained ({} requests still in flight are cancelled)", left);
  // Their handlers end as the ranks confirm; give them a moment before the hard shutdown.
  auto const cancel_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (registry_.size() > 0 && std::chrono::steady_clock::now() < cancel_deadline) {
    std::this_thread::sleep_for(kDrainPoll);
  }
  // Shutdown with a deadline cancels what is still running at the deadline: now.
  server_->Shutdown(std::chrono::system_clock::now());
  server_->Wait();
  shut_down_ = true;
}

FrontendServer::~FrontendServer() {
  // Listener first: the health service dies with the server.
  state_.set_readiness_listener(nullptr);
  if (!shut_down_ && server_ != nullptr) {
    server_->Shutdown(std::chrono::system_clock::now());
    server_->Wait();
  }
}

}  // namespace gcmoe::frontend
