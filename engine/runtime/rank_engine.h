#pragma once
// One rank's step loop: the continuous-batching Scheduler, a model family's StepModel and the
// sampler, in lockstep with every other rank of the group.
//
// Each iteration the ranks agree through the Communicator (one all_reduce of two flags) whether
// any rank has work and whether any wants to stop. When some rank has work, every rank runs a
// step — a rank with nothing to do calls StepModel::step with an empty batch, so the MoE layers'
// exchanges line up. When none has work, every rank idles briefly and asks again. A stop request
// on any rank stops them all at the same iteration.
//
// Threads: submit(), abort(), stats() and request_stop() may be called from any thread; run()
// (or step_once()) from exactly one. Callbacks run on the loop's thread without the engine's lock
// held, so they may call submit()/abort().

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "engine/common/status.h"
#include "engine/runtime/communicator.h"
#include "engine/runtime/rank_request.h"
#include "engine/runtime/step_model.h"
#include "engine/scheduler/scheduler.h"

namespace gcmoe::runtime {

struct RankEngineConfig {
  scheduler::SchedulerConfig scheduler;
  // How long an idle group waits for work before the ranks agree again (each agreement is one
  // collective; a shorter wait answers a new request sooner and costs CPU).
  std::chrono::microseconds idle_wait{2000};
};

struct RankEngineStats {
  scheduler::SchedulerStats scheduler;
  std::uint64_t model_steps = 0;  // StepModel::step calls (empty batches included)
  double step_seconds_sum = 0.0;  // their wall time
  double last_step_seconds = 0.0;
};

enum class LoopState { kStepped, kIdle, kStopped };

class RankEngine {
 public:
  // The model and communicator must outlive the engine. INVALID_ARGUMENT for bad scheduler limits.
  static StatusOr<std::unique_ptr<RankEngine>> create(RankEngineConfig const& config,
                                                      StepModel& model, Communicator& comm);

  // Queues a request. INVALID_ARGUMENT (empty prompt, token outside the vocabulary, no seed, bad
  // sampling parameters, prompt + max_new_tokens over the context or the KV cache),
  // ALREADY_EXISTS (id in flight), RESOURCE_EXHAUSTED (waiting queue full), UNAVAILABLE (stopped).
  // On OK, the callbacks will be called; on error, never.
  Status submit(RankRequest request);

  // Ends a waiting or running request with kAborted (its on_finished follows from the loop).
  // NOT_FOUND if it is unknown or already finished.
  Status abort(scheduler::SequenceId id);

  // Asks the group to stop; every rank leaves run() at the same iteration, every request still in
  // flight ends with kAborted and UNAVAILABLE.
  void request_stop();

  // Runs iterations until stopped (OK) or a model / communicator error, which it returns after
  // ending every request in flight with kAborted and that error.
  Status run();

  // One iteration: agree, then step or idle. The error of a failed step leaves the engine stopped.
  StatusOr<LoopState> step_once();

  RankEngineStats stats() const;
  StepModelInfo const& model_info() const { return model_.info(); }

 private:
  struct Live {
    RankRequest request;
    std::vector<std::int32_t> output;
    std::chrono::steady_clock::time_point submitted;
    std::chrono::steady_clock::time_point admitted;
    std::chrono::steady_clock::time_point first_token;
    bool aborted = false;
  };
  // Callbacks collected under the lock, delivered after it.
  struct Delivery {
    using TokenCallback = std::function<void(std::span<std::int32_t const>)>;
    std::vector<std::pair<TokenCallback, std::vector<std::int32_t>>> tokens;
    std::vector<std::pair<RankRequest, SequenceResult>> finished;
  };

  RankEngine(RankEngineConfig const& config, scheduler::Scheduler scheduler, StepModel& model,
             Communicator& comm);

  Status run_step();
  void collect_finished(Delivery& delivery, Status const& error);
  void fail_all(Status const& error);
  static void deliver(Delivery& delivery);

  RankEngineConfig config_;
  StepModel& model_;
  Communicator& comm_;

  mutable std::mutex mutex_;
  std::condition_variable work_;
  scheduler::Scheduler scheduler_;
  std::unordered_map<scheduler::SequenceId, std::unique_ptr<Live>> live_;
  bool stop_requested_ = false;
  bool stopped_ = false;
  RankEngineStats step_stats_;

  std::vector<float> logits_;
};

}  // namespace gcmoe::runtime
