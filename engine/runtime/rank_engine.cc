#include "engine/runtime/rank_engine.h"

#include <algorithm>
#include <array>

#include "engine/common/check.h"
#include "engine/sampling/sampler.h"

namespace gcmoe::runtime {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

bool contains(std::vector<std::int32_t> const& ids, std::int32_t token) {
  return std::find(ids.begin(), ids.end(), token) != ids.end();
}

}  // namespace

RankEngine::RankEngine(RankEngineConfig const& config, scheduler::Scheduler scheduler,
                       StepModel& model, Communicator& comm)
    : config_(config), model_(model), comm_(comm), scheduler_(std::move(scheduler)) {}

StatusOr<std::unique_ptr<RankEngine>> RankEngine::create(RankEngineConfig const& config,
                                                         StepModel& model, Communicator& comm) {
  GCMOE_CHECK_ARG(model.info().vocab_size > 0, "model reports a vocabulary of {}",
                  model.info().vocab_size);
  GCMOE_ASSIGN_OR_RETURN(scheduler::Scheduler scheduler,
                         scheduler::Scheduler::create(config.scheduler));
  return std::unique_ptr<RankEngine>(new RankEngine(config, std::move(scheduler), model, comm));
}

Status RankEngine::submit(RankRequest request) {
  StepModelInfo const& info = model_.info();
  GCMOE_CHECK_ARG(!request.prompt.empty(), "request {}: empty prompt", request.id);
  GCMOE_CHECK_ARG(request.max_new_tokens >= 1, "request {}: max_new_tokens must be >= 1",
                  request.id);
  for (std::int32_t const token : request.prompt) {
    GCMOE_CHECK_ARG(token >= 0 && token < info.vocab_size,
                    "request {}: prompt token {} is outside the vocabulary of {}", request.id,
                    token, info.vocab_size);
  }
  GCMOE_CHECK_ARG(request.sampling.seed.has_value(), "request {}: no sampling seed", request.id);
  GCMOE_RETURN_IF_ERROR(sampling::validate_sampling_params(request.sampling));
  std::int64_t const context =
      static_cast<std::int64_t>(request.prompt.size()) + request.max_new_tokens;
  GCMOE_CHECK_ARG(info.max_context <= 0 || context <= info.max_context,
                  "request {}: prompt + max_new_tokens = {} exceeds the context of {}", request.id,
                  context, info.max_context);
  GCMOE_CHECK_ARG(request.on_tokens && request.on_finished, "request {}: callbacks unset",
                  request.id);
  {
    std::lock_guard<std::mutex> const lock(mutex_);
    if (stopped_ || stop_requested_) {
      return unavailable_error("the rank engine is stopping");
    }
    if (live_.contains(request.id)) {
      return {StatusCode::kAlreadyExists, fmt::format("request {} is in flight", request.id)};
    }
    GCMOE_RETURN_IF_ERROR(scheduler_.submit(
        {request.id, static_cast<std::int32_t>(request.prompt.size()), request.max_new_tokens}));
    auto live = std::make_unique<Live>();
    live->submitted = Clock::now();
    scheduler::SequenceId const id = request.id;
    live->request = std::move(request);
    live_.emplace(id, std::move(live));
  }
  work_.notify_one();
  return Status();
}

Status RankEngine::abort(scheduler::SequenceId id) {
  std::lock_guard<std::mutex> const lock(mutex_);
  auto const it = live_.find(id);
  if (it == live_.end() || it->second->aborted) {
    return not_found_error(fmt::format("request {} is not in flight", id));
  }
  GCMOE_RETURN_IF_ERROR(scheduler_.abort(id));
  it->second->aborted = true;
  work_.notify_one();
  return Status();
}

void RankEngine::request_stop() {
  {
    std::lock_guard<std::mutex> const lock(mutex_);
    stop_requested_ = true;
  }
  work_.notify_one();
}

RankEngineStats RankEngine::stats() const {
  std::lock_guard<std::mutex> const lock(mutex_);
  RankEngineStats stats = step_stats_;
  stats.scheduler = scheduler_.stats();
  return stats;
}

void RankEngine::collect_finished(Delivery& delivery, Status const& error) {
  for (scheduler::FinishedSequence const& done : scheduler_.drain_finished()) {
    auto const it = live_.find(done.id);
    if (it == live_.end()) {
      continue;
    }
    Live& live = *it->second;
    Clock::time_point const now = Clock::now();
    SequenceResult result;
    result.reason = done.reason;
    result.prompt_tokens = done.prompt_tokens;
    result.generated_tokens = static_cast<std::int32_t>(live.output.size());
    bool const admitted = live.admitted != Clock::time_point{};
    bool const sampled = live.first_token != Clock::time_point{};
    result.timing.queue_seconds = seconds_between(live.submitted, admitted ? live.admitted : now);
    result.timing.time_to_first_token_seconds =
        sampled ? seconds_between(live.submitted, live.first_token) : 0.0;
    result.timing.decode_seconds = sampled ? seconds_between(live.first_token, now) : 0.0;
    result.error = error;
    delivery.finished.emplace_back(std::move(live.request), result);
    // The Live dies here; this step's token deliveries hold copies of its callback.
    live_.erase(it);
  }
}

void RankEngine::deliver(Delivery& delivery) {
  for (auto& [on_tokens, tokens] : delivery.tokens) {
    on_tokens(tokens);
  }
  for (auto& [request, result] : delivery.finished) {
    request.on_finished(result);
  }
}

StatusOr<LoopState> RankEngine::step_once() {
  bool has_work = false;
  bool stop = false;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (stopped_) {
      return LoopState::kStopped;
    }
    // Deliver aborts that happened while idle before the agreement.
    has_work = scheduler_.has_unfinished();
    stop = stop_requested_;
  }
  std::array<float, 2> flags = {has_work ? 1.0f : 0.0f, stop ? 1.0f : 0.0f};
  if (Status const agreed = comm_.all_reduce_sum(flags); !agreed.ok()) {
    fail_all(agreed);
    return agreed;
  }
  if (flags[1] > 0.0f) {
    fail_all(unavailable_error(fmt::format("rank {} stopped", comm_.rank())));
    return LoopState::kStopped;
  }
  if (flags[0] == 0.0f) {
    Delivery delivery;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      collect_finished(delivery, Status());  // aborted while waiting
      if (delivery.finished.empty() && !scheduler_.has_unfinished() && !stop_requested_) {
        work_.wait_for(lock, config_.idle_wait);
      }
    }
    deliver(delivery);
    return LoopState::kIdle;
  }
  if (Status const stepped = run_step(); !stepped.ok()) {
    fail_all(stepped);
    return stepped;
  }
  return LoopState::kStepped;
}

Status RankEngine::run_step() {
  StepModelInfo const& info = model_.info();
  scheduler::StepPlan plan;
  std::vector<std::uint32_t> tokens;
  std::vector<std::vector<std::int32_t>> tables;
  {
    std::lock_guard<std::mutex> const lock(mutex_);
    GCMOE_ASSIGN_OR_RETURN(plan, scheduler_.plan_step());
    Clock::time_point const now = Clock::now();
    for (scheduler::SequenceId const id : plan.admitted) {
      live_.at(id)->admitted = now;
    }
    tokens.reserve(static_cast<std::size_t>(plan.num_tokens));
    for (scheduler::BatchEntry const& entry : plan.entries) {
      Live const& live = *live_.at(entry.id);
      if (entry.is_prefill) {
        for (std::int32_t i = 0; i < entry.num_tokens; ++i) {
          tokens.push_back(static_cast<std::uint32_t>(
              live.request.prompt[static_cast<std::size_t>(entry.start_position + i)]));
        }
      } else {
        tokens.push_back(static_cast<std::uint32_t>(live.output.back()));
      }
      // Copied: an abort during the step releases the scheduler's table.
      GCMOE_ASSIGN_OR_RETURN(std::span<std::int32_t const> const table,
                             scheduler_.block_table(entry.id));
      tables.emplace_back(table.begin(), table.end());
    }
  }
  std::vector<std::span<std::int32_t const>> table_spans(tables.begin(), tables.end());
  StepBatch const batch{plan.entries, tokens, table_spans};
  Clock::time_point const start = Clock::now();
  GCMOE_RETURN_IF_ERROR(model_.step(batch, logits_)
                            .with_context(fmt::format("rank {} step {}", comm_.rank(), plan.step)));
  double const step_seconds = seconds_between(start, Clock::now());

  std::size_t const vocab = static_cast<std::size_t>(info.vocab_size);
  std::size_t const rows = static_cast<std::size_t>(
      std::count_if(plan.entries.begin(), plan.entries.end(),
                    [](scheduler::BatchEntry const& e) { return e.samples_token; }));
  GCMOE_CHECK_INTERNAL(logits_.size() == rows * vocab,
                       "step {}: the model returned {} logits, expected {} rows x {}", plan.step,
                       logits_.size(), rows, vocab);
  Delivery delivery;
  {
    std::lock_guard<std::mutex> const lock(mutex_);
    std::vector<scheduler::StopEvent> stops;
    std::size_t row = 0;
    Clock::time_point const now = Clock::now();
    for (scheduler::BatchEntry const& entry : plan.entries) {
      if (!entry.samples_token) {
        continue;
      }
      std::span<float const> const logits(logits_.data() + row * vocab, vocab);
      ++row;
      auto const it = live_.find(entry.id);
      if (it == live_.end() || it->second->aborted) {
        continue;
      }
      Live& live = *it->second;
      sampling::TokenHistory const history{live.request.prompt, live.output};
      StatusOr<std::int32_t> const token =
          sampling::sample_token(logits, live.request.sampling, history);
      if (!token.ok()) {
        return token.status().with_context(fmt::format("sampling request {}", entry.id));
      }
      live.output.push_back(*token);
      if (live.first_token == Clock::time_point{}) {
        live.first_token = now;
      }
      delivery.tokens.emplace_back(live.request.on_tokens, std::vector<std::int32_t>{*token});
      if (contains(live.request.stop_token_ids, *token)) {
        stops.push_back({entry.id, scheduler::FinishReason::kStopToken});
      } else if (!live.request.ignore_eos &&
                 std::find(info.eos_token_ids.begin(), info.eos_token_ids.end(),
                           static_cast<std::uint32_t>(*token)) != info.eos_token_ids.end()) {
        stops.push_back({entry.id, scheduler::FinishReason::kEos});
      }
    }
    GCMOE_RETURN_IF_ERROR(scheduler_.complete_step(plan, stops));
    ++step_stats_.model_steps;
    step_stats_.step_seconds_sum += step_seconds;
    step_stats_.last_step_seconds = step_seconds;
    collect_finished(delivery, Status());
  }
  deliver(delivery);
  return Status();
}

void RankEngine::fail_all(Status const& error) {
  Delivery delivery;
  {
    std::lock_guard<std::mutex> const lock(mutex_);
    stopped_ = true;
    for (auto const& [id, live] : live_) {
      if (!live->aborted) {
        // Every live request is waiting or running: abort cannot fail.
        (void)scheduler_.abort(id);
        live->aborted = true;
      }
    }
    collect_finished(delivery, error);
  }
  deliver(delivery);
}

Status RankEngine::run() {
  while (true) {
    StatusOr<LoopState> const state = step_once();
    if (!state.ok()) {
      return state.status();
    }
    if (*state == LoopState::kStopped) {
      return Status();
    }
  }
}

}  // namespace gcmoe::runtime
