#include "engine/scheduler/scheduler.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

#include "engine/common/check.h"

namespace gcmoe::scheduler {

StatusOr<Scheduler> Scheduler::create(SchedulerConfig const& config) {
  GCMOE_CHECK_ARG(config.max_waiting_requests > 0, "max_waiting_requests must be > 0, got {}",
                  config.max_waiting_requests);
  GCMOE_CHECK_ARG(config.max_running_requests > 0, "max_running_requests must be > 0, got {}",
                  config.max_running_requests);
  GCMOE_CHECK_ARG(config.max_batch_tokens >= config.max_running_requests,
                  "max_batch_tokens ({}) must be >= max_running_requests ({}) so every running "
                  "sequence decodes each step",
                  config.max_batch_tokens, config.max_running_requests);
  GCMOE_ASSIGN_OR_RETURN(KvBlockManager kv,
                         KvBlockManager::create(config.kv_blocks, config.kv_block_size));
  return Scheduler(config, std::move(kv));
}

Scheduler::Scheduler(SchedulerConfig const& config, KvBlockManager kv)
    : config_(config), kv_(std::move(kv)) {}

std::int64_t Scheduler::reservation_tokens(SequenceSpec const& spec) const {
  return static_cast<std::int64_t>(spec.prompt_tokens) + spec.max_new_tokens;
}

Status Scheduler::submit(SequenceSpec const& spec) {
  GCMOE_CHECK_ARG(spec.prompt_tokens >= 1, "sequence {}: empty prompt", spec.id);
  GCMOE_CHECK_ARG(spec.max_new_tokens >= 1, "sequence {}: max_new_tokens must be >= 1, got {}",
                  spec.id, spec.max_new_tokens);
  std::int64_t const blocks = kv_.blocks_for_tokens(reservation_tokens(spec));
  GCMOE_CHECK_ARG(blocks <= config_.kv_blocks,
                  "sequence {}: prompt + max_new_tokens = {} tokens need {} KV blocks, the cache "
                  "has {}",
                  spec.id, reservation_tokens(spec), blocks, config_.kv_blocks);
  if (sequences_.contains(spec.id)) {
    return {StatusCode::kAlreadyExists, fmt::format("sequence {} is already queued", spec.id)};
  }
  if (static_cast<std::int32_t>(waiting_.size()) >= config_.max_waiting_requests) {
    return resource_exhausted_error(
        fmt::format("waiting queue full ({} requests)", waiting_.size()));
  }
  sequences_.emplace(spec.id, Sequence{spec});
  waiting_.push_back(spec.id);
  return Status();
}

Status Scheduler::schedule_prefill(Sequence& seq, std::int32_t& budget, StepPlan& plan) {
  std::int32_t const chunk = std::min(seq.spec.prompt_tokens - seq.computed_tokens, budget);
  if (chunk <= 0) {
    return Status();
  }
  std::int32_t const end = seq.computed_tokens + chunk;
  GCMOE_RETURN_IF_ERROR(kv_.grow_to(seq.spec.id, end));
  plan.entries.push_back(
      {seq.spec.id, seq.computed_tokens, chunk, true, end == seq.spec.prompt_tokens});
  budget -= chunk;
  return Status();
}

Status Scheduler::admit(StepPlan& plan, std::int32_t& budget) {
  while (!waiting_.empty() && budget > 0 &&
         static_cast<std::int32_t>(running_order_.size()) < config_.max_running_requests) {
    Sequence& seq = sequences_.at(waiting_.front());
    if (!kv_.can_reserve(reservation_tokens(seq.spec))) {
      break;  // FIFO: the head waits for blocks; nobody overtakes it
    }
    GCMOE_RETURN_IF_ERROR(kv_.reserve(seq.spec.id, reservation_tokens(seq.spec)));
    waiting_.pop_front();
    seq.phase = Phase::kPrefill;
    running_order_.push_back(seq.spec.id);
    plan.admitted.push_back(seq.spec.id);
    GCMOE_RETURN_IF_ERROR(schedule_prefill(seq, budget, plan));
  }
  return Status();
}

StatusOr<StepPlan> Scheduler::plan_step() {
  if (plan_outstanding_) {
    return failed_precondition_error(
        fmt::format("step {} is planned but not completed", next_step_ - 1));
  }
  StepPlan plan;
  plan.step = next_step_;
  std::int32_t budget = config_.max_batch_tokens;
  // Decodes first: budget >= max_running guarantees they all fit.
  for (SequenceId const id : running_order_) {
    Sequence& seq = sequences_.at(id);
    if (seq.phase == Phase::kDecode) {
      // Feeds the last sampled token at its position; KV slot = that position.
      std::int32_t const position = seq.spec.prompt_tokens + seq.generated_tokens - 1;
      GCMOE_RETURN_IF_ERROR(kv_.grow_to(id, position + 1));
      plan.entries.push_back({id, position, 1, false, true});
      --budget;
    }
  }
  for (SequenceId const id : running_order_) {
    Sequence& seq = sequences_.at(id);
    if (seq.phase == Phase::kPrefill) {
      GCMOE_RETURN_IF_ERROR(schedule_prefill(seq, budget, plan));
    }
  }
  GCMOE_RETURN_IF_ERROR(admit(plan, budget));
  plan.num_tokens = config_.max_batch_tokens - budget;
  GCMOE_CHECK_INTERNAL(budget >= 0, "step {} over the token budget", plan.step);
  ++next_step_;
  plan_outstanding_ = true;
  outstanding_ = plan.entries;
  return plan;
}

Status Scheduler::complete_step(StepPlan const& plan, std::span<StopEvent const> stops) {
  if (!plan_outstanding_ || plan.step + 1 != next_step_) {
    return failed_precondition_error(fmt::format("step {} is not the outstanding plan", plan.step));
  }
  // A sequence aborted after the plan is gone, or waiting again if its id was resubmitted.
  auto const in_plan = [this](SequenceId id) {
    auto const it = sequences_.find(id);
    return it != sequences_.end() && it->second.phase != Phase::kWaiting;
  };
  std::unordered_set<SequenceId> sampled;
  for (BatchEntry const& entry : outstanding_) {
    if (entry.samples_token) {
      sampled.insert(entry.id);
    }
  }
  std::unordered_map<SequenceId, FinishReason> stopped;
  for (StopEvent const& stop : stops) {
    GCMOE_CHECK_ARG(stop.reason == FinishReason::kStopToken || stop.reason == FinishReason::kEos,
                    "sequence {} stopped with reason {}; only stop_token and eos come from a step",
                    stop.id, finish_reason_name(stop.reason));
    GCMOE_CHECK_ARG(sampled.contains(stop.id), "sequence {} sampled no token in step {}", stop.id,
                    plan.step);
    stopped.emplace(stop.id, stop.reason);
  }

  for (BatchEntry const& entry : outstanding_) {
    if (!in_plan(entry.id)) {
      continue;  // aborted after the plan
    }
    Sequence& seq = sequences_.at(entry.id);
    if (entry.is_prefill) {
      seq.computed_tokens += entry.num_tokens;
    }
    if (!entry.samples_token) {
      continue;
    }
    seq.phase = Phase::kDecode;
    ++seq.generated_tokens;
    if (auto const stop = stopped.find(entry.id); stop != stopped.end()) {
      GCMOE_RETURN_IF_ERROR(finish(entry.id, stop->second));
    } else if (seq.generated_tokens >= seq.spec.max_new_tokens) {
      GCMOE_RETURN_IF_ERROR(finish(entry.id, FinishReason::kLength));
    }
  }
  plan_outstanding_ = false;
  outstanding_.clear();
  return Status();
}

Status Scheduler::finish(SequenceId id, FinishReason reason) {
  auto const it = sequences_.find(id);
  GCMOE_CHECK_INTERNAL(it != sequences_.end(), "finishing unknown sequence {}", id);
  Sequence const& seq = it->second;
  if (seq.phase == Phase::kWaiting) {
    waiting_.erase(std::find(waiting_.begin(), waiting_.end(), id));
  } else {
    GCMOE_RETURN_IF_ERROR(kv_.release(id));
    running_order_.erase(std::find(running_order_.begin(), running_order_.end(), id));
  }
  finished_.push_back({id, reason, seq.spec.prompt_tokens, seq.generated_tokens});
  ++finished_total_;
  sequences_.erase(it);
  return Status();
}

Status Scheduler::abort(SequenceId id) {
  if (!sequences_.contains(id)) {
    return not_found_error(fmt::format("sequence {} is not waiting or running", id));
  }
  return finish(id, FinishReason::kAborted);
}

std::vector<FinishedSequence> Scheduler::drain_finished() {
  std::vector<FinishedSequence> out;
  out.swap(finished_);
  return out;
}

StatusOr<std::span<std::int32_t const>> Scheduler::block_table(SequenceId id) const {
  return kv_.block_table(id);
}

SchedulerStats Scheduler::stats() const {
  KvUsage const kv = kv_.usage();
  return {static_cast<std::int32_t>(waiting_.size()),
          static_cast<std::int32_t>(running_order_.size()),
          kv.total_blocks,
          kv.reserved_blocks,
          kv.allocated_blocks,
          next_step_,
          finished_total_};
}

}  // namespace gcmoe::scheduler
