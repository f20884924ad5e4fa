#include "server/frontend/generate_service.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "engine/common/check.h"
#include "server/frontend/status_mapping.h"

namespace gcmoe::frontend {
namespace {

void add_load(v1::RankLoad& into, scheduler::SchedulerStats const& stats) {
  into.set_waiting_requests(into.waiting_requests() + static_cast<std::uint32_t>(stats.waiting));
  into.set_running_requests(into.running_requests() + static_cast<std::uint32_t>(stats.running));
  into.set_kv_blocks_used(into.kv_blocks_used() +
                          static_cast<std::uint64_t>(stats.kv_blocks_allocated));
  into.set_kv_blocks_reserved(into.kv_blocks_reserved() +
                              static_cast<std::uint64_t>(stats.kv_blocks_reserved));
  into.set_kv_blocks_total(into.kv_blocks_total() +
                           static_cast<std::uint64_t>(stats.kv_blocks_total));
}

}  // namespace

GenerateServiceImpl::GenerateServiceImpl(ServerIdentity identity, ServingState& state,
                                         RankLoadBoard& loads, RequestRegistry& registry)
    : identity_(std::move(identity)), state_(state), loads_(loads), registry_(registry) {}

Status GenerateServiceImpl::generate(v1::GenerateRequest const& request) {
  ServingSnapshot const snapshot = state_.snapshot();
  if (snapshot.draining) {
    return unavailable_error(snapshot.message);
  }
  // A malformed request is INVALID_ARGUMENT whatever the server's state; the model-dependent
  // checks (vocabulary, context) need the model's limits.
  if (snapshot.limits.has_value()) {
    GCMOE_RETURN_IF_ERROR(validate_generate_request(request, *snapshot.limits).status());
  } else {
    GCMOE_RETURN_IF_ERROR(validate_request_shape(request));
  }
  GCMOE_ASSIGN_OR_RETURN(RequestIdLease const lease, registry_.claim(request.request_id()));
  GCMOE_RETURN_IF_ERROR(state_.check_serving());
  // Ready means a model is loaded, which no code path does yet: admission, the router and the
  // rank step loop land with the model families.
  return unimplemented_error(fmt::format(
      "request '{}': the decode loop is not built yet (model families land with issue 8)",
      lease.id()));
}

grpc::Status GenerateServiceImpl::Generate(grpc::ServerContext* /*context*/,
                                           v1::GenerateRequest const* request,
                                           grpc::ServerWriter<v1::GenerateResponse>* /*writer*/) {
  Status const status = generate(*request);
  spdlog::debug("Generate '{}': {}", request->request_id(), status.to_string());
  return to_grpc_status(status);
}

grpc::Status GenerateServiceImpl::Abort(grpc::ServerContext* /*context*/,
                                        v1::AbortRequest const* /*request*/,
                                        v1::AbortResponse* /*response*/) {
  // Nothing can be in flight without the decode loop; until then the honest answer is why.
  Status const serving = state_.check_serving();
  return to_grpc_status(serving.ok() ? unimplemented_error("Abort lands with the decode loop")
                                     : serving);
}

grpc::Status GenerateServiceImpl::GetModelInfo(grpc::ServerContext* /*context*/,
                                               v1::GetModelInfoRequest const* /*request*/,
                                               v1::GetModelInfoResponse* /*response*/) {
  ServingSnapshot const snapshot = state_.snapshot();
  if (!snapshot.limits.has_value()) {
    return to_grpc_status(unavailable_error(kNoModelMessage));
  }
  return to_grpc_status(unimplemented_error("model info lands with the model families (issue 8)"));
}

grpc::Status GenerateServiceImpl::GetServerInfo(grpc::ServerContext* /*context*/,
                                                v1::GetServerInfoRequest const* /*request*/,
                                                v1::GetServerInfoResponse* response) {
  ServingSnapshot const snapshot = state_.snapshot();
  response->set_version(identity_.version);
  response->set_ranks(identity_.ranks);
  response->set_backend(identity_.backend);
  response->set_ready(snapshot.ready && !snapshot.draining);
  response->set_draining(snapshot.draining);
  response->set_status_message(snapshot.message);
  return grpc::Status::OK;
}

grpc::Status GenerateServiceImpl::GetLoads(grpc::ServerContext* /*context*/,
                                           v1::GetLoadsRequest const* /*request*/,
                                           v1::GetLoadsResponse* response) {
  std::vector<scheduler::SchedulerStats> const stats = loads_.snapshot();
  v1::RankLoad* total = response->mutable_total();
  for (std::size_t rank = 0; rank < stats.size(); ++rank) {
    v1::RankLoad* load = response->add_ranks();
    load->set_rank(static_cast<std::uint32_t>(rank));
    add_load(*load, stats[rank]);
    add_load(*total, stats[rank]);
  }
  return grpc::Status::OK;
}

}  // namespace gcmoe::frontend
