#include "server/frontend/generate_service.h"

#include <spdlog/spdlog.h>

#include <random>
#include <utility>

#include "engine/common/check.h"
#include "server/frontend/status_mapping.h"

namespace gcmoe::frontend {
namespace {

using Clock = std::chrono::steady_clock;

// How long Abort waits for a rank to answer.
constexpr std::chrono::seconds kRankRpcTimeout{2};

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

std::string reason_label(v1::FinishReason reason) {
  switch (reason) {
    case v1::FINISH_REASON_LENGTH:
      return "length";
    case v1::FINISH_REASON_STOP_TOKEN:
      return "stop";
    case v1::FINISH_REASON_EOS:
      return "eos";
    case v1::FINISH_REASON_ABORTED:
      return "abort";
    default:
      return "unspecified";
  }
}

std::uint64_t draw_seed() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng();
}

}  // namespace

GenerateServiceImpl::GenerateServiceImpl(ServerIdentity identity, ServiceContext context)
    : identity_(std::move(identity)), ctx_(context) {}

Status GenerateServiceImpl::generate(grpc::ServerContext& context,
                                     v1::GenerateRequest const& request,
                                     grpc::ServerWriter<v1::GenerateResponse>& writer) {
  Clock::time_point const arrived = Clock::now();
  ServingSnapshot const snapshot = ctx_.state.snapshot();
  if (snapshot.draining) {
    return unavailable_error(snapshot.message);
  }
  // A malformed request is INVALID_ARGUMENT whatever the server's state; the model-dependent
  // checks (vocabulary, context) need the model's limits.
  if (!snapshot.limits.has_value()) {
    GCMOE_RETURN_IF_ERROR(validate_request_shape(request));
    return unavailable_error(snapshot.message);
  }
  GCMOE_RETURN_IF_ERROR(validate_generate_request(request, *snapshot.limits).status());
  GCMOE_ASSIGN_OR_RETURN(RequestIdLease const lease, ctx_.registry.claim(request.request_id()));
  GCMOE_RETURN_IF_ERROR(ctx_.state.check_serving());
  std::shared_ptr<RankGroup const> const group = ctx_.group.get();
  if (group == nullptr) {
    return unavailable_error("the rank group is restarting");
  }
  std::int64_t const tokens = request.prompt_token_ids_size() +
                              static_cast<std::int64_t>(request.stopping().max_new_tokens());
  GCMOE_ASSIGN_OR_RETURN(AdmissionTicket const ticket, ctx_.admission.admit(tokens));

  internal::v1::SubmitRequest submit;
  submit.set_sequence_id(next_sequence_.fetch_add(1));
  *submit.mutable_prompt_token_ids() = request.prompt_token_ids();
  *submit.mutable_sampling() = request.sampling();
  if (!submit.sampling().has_seed()) {
    submit.mutable_sampling()->set_seed(draw_seed());
  }
  *submit.mutable_stopping() = request.stopping();

  // Cancellation and deadline of the client's call propagate to the rank's.
  std::unique_ptr<grpc::ClientContext> call = grpc::ClientContext::FromServerContext(context);
  ctx_.in_flight.add(lease.id(), {group, ticket.rank(), submit.sequence_id(), call.get()});
  auto reader = group->ranks[ticket.rank()]->Submit(call.get(), submit);

  internal::v1::SubmitEvent event;
  v1::GenerateResponse response;
  response.set_request_id(lease.id());
  bool finished = false;
  bool client_gone = false;
  Clock::time_point last_token{};
  while (reader->Read(&event)) {
    Clock::time_point const now = Clock::now();
    if (event.has_delta()) {
      if (last_token == Clock::time_point{}) {
        ctx_.metrics.observe_time_to_first_token(
            std::chrono::duration<double>(now - arrived).count());
      } else {
        ctx_.metrics.observe_inter_token_latency(
            std::chrono::duration<double>(now - last_token).count());
      }
      last_token = now;
      *response.mutable_delta() = event.delta();
    } else if (event.has_finished()) {
      finished = true;
      *response.mutable_finished() = event.finished();
      ctx_.metrics.observe_request(
          std::chrono::duration<double>(now - arrived).count(), event.finished().prompt_tokens(),
          event.finished().completion_tokens(), reason_label(event.finished().reason()));
    }
    if (!client_gone && !writer.Write(response)) {
      client_gone = true;
      call->TryCancel();
    }
  }
  grpc::Status const rank_status = reader->Finish();
  ctx_.in_flight.remove(lease.id());
  if (finished && !client_gone) {
    return Status();
  }
  if (context.IsCancelled() || client_gone) {
    if (context.deadline() <= std::chrono::system_clock::now()) {
      return deadline_exceeded_error(fmt::format("request '{}': deadline exceeded", lease.id()));
    }
    return cancelled_error(fmt::format("request '{}': cancelled by the client", lease.id()));
  }
  if (rank_status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return deadline_exceeded_error(fmt::format("request '{}': deadline exceeded", lease.id()));
  }
  if (!rank_status.ok() && response.kind_case() == v1::GenerateResponse::KIND_NOT_SET &&
      rank_status.error_code() != grpc::StatusCode::UNAVAILABLE &&
      rank_status.error_code() != grpc::StatusCode::CANCELLED) {
    // The rank refused the request before it started (e.g. RESOURCE_EXHAUSTED): its answer.
    return from_grpc_status(rank_status);
  }
  if (rank_status.error_code() == grpc::StatusCode::CANCELLED) {
    // Cancelled from our side: draining past --shutdown-timeout, or a rank fault.
    return unavailable_error(fmt::format(
        "request '{}': ended by the server (shutting down, or its rank failed)", lease.id()));
  }
  return unavailable_error(fmt::format(
      "request '{}': rank {} failed: {}", lease.id(), ticket.rank(),
      rank_status.ok() ? std::string("stream ended early") : rank_status.error_message()));
}

grpc::Status GenerateServiceImpl::Generate(grpc::ServerContext* context,
                                           v1::GenerateRequest const* request,
                                           grpc::ServerWriter<v1::GenerateResponse>* writer) {
  Status const status = generate(*context, *request, *writer);
  // Counted after generate() has released the call's admission ticket and id: a counted error
  // means the router no longer counts the call (the e2e cancel check waits on that).
  if (!status.ok()) {
    ctx_.metrics.count_error(std::string(status_code_name(status.code())));
  }
  spdlog::debug("Generate '{}': {}", request->request_id(), status.to_string());
  return to_grpc_status(status);
}

grpc::Status GenerateServiceImpl::Abort(grpc::ServerContext* /*context*/,
                                        v1::AbortRequest const* request,
                                        v1::AbortResponse* response) {
  for (std::string const& id : request->request_ids()) {
    std::optional<InFlightRequest> const found = ctx_.in_flight.find(id);
    bool aborted = false;
    if (found.has_value()) {
      grpc::ClientContext call;
      call.set_deadline(std::chrono::system_clock::now() + kRankRpcTimeout);
      internal::v1::RankAbortRequest rank_request;
      rank_request.add_sequence_ids(found->sequence_id);
      internal::v1::RankAbortResponse rank_response;
      grpc::Status const status =
          found->group->ranks[found->rank]->Abort(&call, rank_request, &rank_response);
      aborted = status.ok() && rank_response.aborted_size() == 1;
      if (!status.ok()) {
        // The rank is gone: the request ends with UNAVAILABLE on its own; cancel to be sure.
        aborted = ctx_.in_flight.cancel(id);
      }
    }
    if (aborted) {
      response->add_aborted(id);
    } else {
      response->add_not_found(id);
    }
  }
  return grpc::Status::OK;
}

grpc::Status GenerateServiceImpl::GetModelInfo(grpc::ServerContext* /*context*/,
                                               v1::GetModelInfoRequest const* /*request*/,
                                               v1::GetModelInfoResponse* response) {
  std::shared_ptr<RankGroup const> const group = ctx_.group.get();
  if (group == nullptr) {
    return to_grpc_status(unavailable_error(ctx_.state.snapshot().message));
  }
  ModelDescription const& model = group->model;
  response->set_model_type(model.family);
  response->set_model_path(model.model_path);
  response->set_vocab_size(model.vocab_size);
  response->set_max_context_tokens(model.max_context_tokens);
  if (!model.eos_token_ids.empty()) {
    response->set_eos_token_id(model.eos_token_ids.front());
  }
  response->set_num_layers(model.num_layers);
  response->set_num_routed_experts(model.num_routed_experts);
  response->set_experts_per_token(model.experts_per_token);
  return grpc::Status::OK;
}

grpc::Status GenerateServiceImpl::GetServerInfo(grpc::ServerContext* /*context*/,
                                                v1::GetServerInfoRequest const* /*request*/,
                                                v1::GetServerInfoResponse* response) {
  ServingSnapshot const snapshot = ctx_.state.snapshot();
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
  std::vector<scheduler::SchedulerStats> const stats = ctx_.loads.snapshot();
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
