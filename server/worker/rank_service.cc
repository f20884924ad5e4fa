#include "server/worker/rank_service.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

#include "server/frontend/request_validation.h"
#include "server/frontend/status_mapping.h"

namespace gcmoe::worker {
namespace {

// How often a Submit handler waiting for tokens checks whether its call was cancelled.
constexpr std::chrono::milliseconds kCancelPoll{20};

// Events of one sequence, from the step loop's thread to the handler's.
struct EventQueue {
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<std::vector<std::int32_t>> tokens;
  std::optional<runtime::SequenceResult> result;
};

}  // namespace

v1::FinishReason to_proto_reason(scheduler::FinishReason reason) {
  switch (reason) {
    case scheduler::FinishReason::kLength:
      return v1::FINISH_REASON_LENGTH;
    case scheduler::FinishReason::kStopToken:
      return v1::FINISH_REASON_STOP_TOKEN;
    case scheduler::FinishReason::kEos:
      return v1::FINISH_REASON_EOS;
    case scheduler::FinishReason::kAborted:
      return v1::FINISH_REASON_ABORTED;
  }
  return v1::FINISH_REASON_UNSPECIFIED;
}

RankServiceImpl::RankServiceImpl(runtime::RankEngine& engine, std::int32_t rank,
                                 std::int32_t world_size)
    : engine_(engine), rank_(rank), world_size_(world_size) {}

grpc::Status RankServiceImpl::Submit(grpc::ServerContext* context,
                                     internal::v1::SubmitRequest const* request,
                                     grpc::ServerWriter<internal::v1::SubmitEvent>* writer) {
  auto queue = std::make_shared<EventQueue>();
  runtime::RankRequest rank_request;
  rank_request.id = request->sequence_id();
  rank_request.prompt.assign(request->prompt_token_ids().begin(),
                             request->prompt_token_ids().end());
  rank_request.sampling = frontend::sampling_params_from_proto(request->sampling());
  rank_request.max_new_tokens = static_cast<std::int32_t>(request->stopping().max_new_tokens());
  rank_request.stop_token_ids.assign(request->stopping().stop_token_ids().begin(),
                                     request->stopping().stop_token_ids().end());
  rank_request.ignore_eos = request->stopping().ignore_eos();
  rank_request.on_tokens = [queue](std::span<std::int32_t const> tokens) {
    {
      std::lock_guard<std::mutex> const lock(queue->mutex);
      queue->tokens.emplace_back(tokens.begin(), tokens.end());
    }
    queue->ready.notify_one();
  };
  rank_request.on_finished = [queue](runtime::SequenceResult const& result) {
    {
      std::lock_guard<std::mutex> const lock(queue->mutex);
      queue->result = result;
    }
    queue->ready.notify_one();
  };
  scheduler::SequenceId const id = request->sequence_id();
  if (Status const submitted = engine_.submit(std::move(rank_request)); !submitted.ok()) {
    return frontend::to_grpc_status(submitted);
  }

  bool abort_sent = false;
  auto const abort_once = [&] {
    if (!abort_sent) {
      abort_sent = true;
      (void)engine_.abort(id);  // NOT_FOUND when it finished meanwhile: nothing to do
    }
  };
  while (true) {
    std::deque<std::vector<std::int32_t>> tokens;
    std::optional<runtime::SequenceResult> result;
    {
      std::unique_lock<std::mutex> lock(queue->mutex);
      queue->ready.wait_for(lock, kCancelPoll,
                            [&] { return !queue->tokens.empty() || queue->result.has_value(); });
      tokens.swap(queue->tokens);
      result = queue->result;
    }
    if (context->IsCancelled()) {
      abort_once();
      if (result.has_value()) {
        return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled");
      }
      continue;  // wait for the engine to confirm, so the KV is released before we return
    }
    for (std::vector<std::int32_t> const& step : tokens) {
      internal::v1::SubmitEvent event;
      event.mutable_delta()->mutable_token_ids()->Add(step.begin(), step.end());
      if (!writer->Write(event)) {
        abort_once();
      }
    }
    if (!result.has_value()) {
      continue;
    }
    if (!result->error.ok()) {
      // The rank failed (model or peer): the front-end ends the request with UNAVAILABLE.
      return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                          fmt::format("rank {}: {}", rank_, result->error.to_string()));
    }
    internal::v1::SubmitEvent event;
    v1::Finished* finished = event.mutable_finished();
    finished->set_reason(to_proto_reason(result->reason));
    finished->set_prompt_tokens(static_cast<std::uint32_t>(result->prompt_tokens));
    finished->set_completion_tokens(static_cast<std::uint32_t>(result->generated_tokens));
    finished->mutable_timing()->set_queue_seconds(result->timing.queue_seconds);
    finished->mutable_timing()->set_time_to_first_token_seconds(
        result->timing.time_to_first_token_seconds);
    finished->mutable_timing()->set_decode_seconds(result->timing.decode_seconds);
    writer->Write(event);
    return grpc::Status::OK;
  }
}

grpc::Status RankServiceImpl::Abort(grpc::ServerContext* /*context*/,
                                    internal::v1::RankAbortRequest const* request,
                                    internal::v1::RankAbortResponse* response) {
  for (std::uint64_t const id : request->sequence_ids()) {
    if (engine_.abort(id).ok()) {
      response->add_aborted(id);
    }
  }
  return grpc::Status::OK;
}

grpc::Status RankServiceImpl::GetRankStatus(grpc::ServerContext* /*context*/,
                                            internal::v1::RankStatusRequest const* /*request*/,
                                            internal::v1::RankStatusResponse* response) {
  runtime::StepModelInfo const& info = engine_.model_info();
  runtime::RankEngineStats const stats = engine_.stats();
  response->set_rank(static_cast<std::uint32_t>(rank_));
  response->set_world_size(static_cast<std::uint32_t>(world_size_));
  response->set_model_family(info.family);
  response->set_vocab_size(static_cast<std::uint32_t>(info.vocab_size));
  response->set_max_context_tokens(static_cast<std::uint32_t>(info.max_context));
  response->mutable_eos_token_ids()->Add(info.eos_token_ids.begin(), info.eos_token_ids.end());
  v1::RankLoad* load = response->mutable_load();
  load->set_rank(static_cast<std::uint32_t>(rank_));
  load->set_waiting_requests(static_cast<std::uint32_t>(stats.scheduler.waiting));
  load->set_running_requests(static_cast<std::uint32_t>(stats.scheduler.running));
  load->set_kv_blocks_used(static_cast<std::uint64_t>(stats.scheduler.kv_blocks_allocated));
  load->set_kv_blocks_total(static_cast<std::uint64_t>(stats.scheduler.kv_blocks_total));
  load->set_kv_blocks_reserved(static_cast<std::uint64_t>(stats.scheduler.kv_blocks_reserved));
  response->set_model_steps(stats.model_steps);
  response->set_step_seconds_sum(stats.step_seconds_sum);
  response->set_last_step_seconds(stats.last_step_seconds);
  response->set_pid(static_cast<std::uint32_t>(::getpid()));
  return grpc::Status::OK;
}

}  // namespace gcmoe::worker
