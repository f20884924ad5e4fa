#pragma once
// Continuous batching for one rank, as a plain object (no threads, no GPU): the step loop calls
// plan_step(), runs the model on the plan, then complete_step() with the sequences that sampled a
// stop token or EOS.
//
// Policy:
// - a bounded FIFO waiting queue (submit answers RESOURCE_EXHAUSTED when full);
// - admission strictly in submission order while the KV reservation of prompt + max_new_tokens
//   fits, fewer than max_running_requests run, and the step has token budget left — a head that
//   does not fit blocks the ones behind it (no overtaking, no starvation);
// - every step: one decode token for each decoding sequence first, then prefill chunks of the
//   prefilling ones in admission order, within max_batch_tokens (chunked prefill);
// - running sequences are never preempted; finishing or aborting releases their KV blocks.
// Every submitted sequence ends exactly once, reported by drain_finished() with its reason.

#include <deque>
#include <span>
#include <unordered_map>
#include <vector>

#include "engine/common/status.h"
#include "engine/scheduler/kv_block_manager.h"
#include "engine/scheduler/scheduler_types.h"

namespace gcmoe::scheduler {

class Scheduler {
 public:
  // INVALID_ARGUMENT for non-positive limits or max_batch_tokens < max_running_requests.
  static StatusOr<Scheduler> create(SchedulerConfig const& config);

  // Queues a sequence. INVALID_ARGUMENT for an empty prompt, max_new_tokens < 1, or a
  // reservation larger than the whole cache; ALREADY_EXISTS for an id not yet finished;
  // RESOURCE_EXHAUSTED when the waiting queue is full.
  Status submit(SequenceSpec const& spec);

  // The next step's batch (possibly empty: the rank still joins the MoE layers with 0 tokens).
  // FAILED_PRECONDITION while the previous plan is not completed.
  StatusOr<StepPlan> plan_step();

  // Applies the outcome of `plan`: prefill progress, one sampled token per sampling entry, the
  // stops, and LENGTH for sequences at max_new_tokens. Entries of sequences aborted since the plan
  // are ignored. FAILED_PRECONDITION if `plan` is not the outstanding one; INVALID_ARGUMENT for a
  // stop of a sequence that sampled nothing in this plan or with reason other than stop/EOS.
  Status complete_step(StepPlan const& plan, std::span<StopEvent const> stops);

  // Ends a waiting or running sequence with kAborted. NOT_FOUND if unknown or already finished.
  Status abort(SequenceId id);

  // Sequences finished since the last call, in the order they ended.
  std::vector<FinishedSequence> drain_finished();

  // The sequence's KV block ids (for the executor). NOT_FOUND unless it is running.
  StatusOr<std::span<std::int32_t const>> block_table(SequenceId id) const;

  SchedulerStats stats() const;
  bool has_unfinished() const { return !waiting_.empty() || !running_order_.empty(); }
  SchedulerConfig const& config() const { return config_; }

 private:
  enum class Phase { kWaiting, kPrefill, kDecode };

  struct Sequence {
    SequenceSpec spec;
    Phase phase = Phase::kWaiting;
    std::int32_t computed_tokens = 0;  // prompt positions whose KV is computed
    std::int32_t generated_tokens = 0;
  };

  Scheduler(SchedulerConfig const& config, KvBlockManager kv);

  std::int64_t reservation_tokens(SequenceSpec const& spec) const;
  Status schedule_prefill(Sequence& seq, std::int32_t& budget, StepPlan& plan);
  Status admit(StepPlan& plan, std::int32_t& budget);
  Status finish(SequenceId id, FinishReason reason);

  SchedulerConfig config_;
  KvBlockManager kv_;
  std::unordered_map<SequenceId, Sequence> sequences_;  // waiting and running
  std::deque<SequenceId> waiting_;
  std::vector<SequenceId> running_order_;  // admission order
  std::vector<FinishedSequence> finished_;
  std::uint64_t next_step_ = 0;
  bool plan_outstanding_ = false;
  std::vector<BatchEntry> outstanding_;  // our copy of the plan being executed
  std::uint64_t finished_total_ = 0;
};

}  // namespace gcmoe::scheduler
