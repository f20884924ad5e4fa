#include "client/bench_runner.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "client/generate_stream.h"

namespace gcmoe::client {
namespace {

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// Requests due but not yet taken by a client thread. The dispatcher blocks while `limit` are
// queued, so a run with an infinite rate never builds an unbounded backlog.
class DueQueue {
 public:
  explicit DueQueue(std::size_t limit) : limit_(limit) {}

  void push(BenchRequest request) {
    std::unique_lock<std::mutex> lock(mutex_);
    has_room_.wait(lock, [this] { return queue_.size() < limit_; });
    queue_.push_back(std::move(request));
    has_work_.notify_one();
  }

  // nullopt once closed and drained.
  std::optional<BenchRequest> pop() {
    std::unique_lock<std::mutex> lock(mutex_);
    has_work_.wait(lock, [this] { return closed_ || !queue_.empty(); });
    if (queue_.empty()) {
      return std::nullopt;
    }
    BenchRequest request = std::move(queue_.front());
    queue_.pop_front();
    has_room_.notify_one();
    return request;
  }

  void close() {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    has_work_.notify_all();
  }

 private:
  std::size_t limit_;
  std::mutex mutex_;
  std::condition_variable has_work_;
  std::condition_variable has_room_;
  std::deque<BenchRequest> queue_;
  bool closed_ = false;
};

RequestOutcome send_one(v1::GenerateService::Stub& stub, BenchConfig const& config,
                        BenchRequest const& request, std::string const& request_id,
                        Clock::time_point run_start) {
  RequestOutcome outcome;
  outcome.index = request.index;
  outcome.request_id = request_id;
  outcome.prompt_tokens = static_cast<std::int64_t>(request.prompt_token_ids.size());
  v1::GenerateRequest const message = make_generate_request(config, request, request_id);

  Clock::time_point const sent = Clock::now();
  outcome.start_s = seconds_between(run_start, sent);
  std::optional<Clock::time_point> previous;
  auto const on_tokens = [&](std::span<std::uint32_t const> tokens, Clock::time_point at) {
    if (previous) {
      outcome.itl_s.push_back(seconds_between(*previous, at));
    } else {
      outcome.ttft_s = seconds_between(sent, at);
    }
    previous = at;
    outcome.chunks.push_back(
        {seconds_between(run_start, at), static_cast<std::uint32_t>(tokens.size())});
  };
  StreamResult const result = run_generate_stream(
      stub, message, std::chrono::duration<double>(config.request_timeout_s), on_tokens);
  outcome.e2el_s = seconds_between(sent, Clock::now());
  outcome.output_tokens = result.tokens;
  outcome.success = result.status.ok();
  outcome.status_code = grpc_code_name(result.status.error_code());
  outcome.error = result.status.error_message();
  if (result.finished) {
    outcome.finish_reason = finish_reason_name(result.finished->reason());
  }
  return outcome;
}

}  // namespace

v1::GenerateRequest make_generate_request(BenchConfig const& config, BenchRequest const& request,
                                          std::string const& request_id) {
  v1::GenerateRequest message;
  message.set_request_id(request_id);
  message.mutable_prompt_token_ids()->Add(request.prompt_token_ids.begin(),
                                          request.prompt_token_ids.end());
  message.mutable_stopping()->set_max_new_tokens(request.max_new_tokens);
  message.mutable_stopping()->set_ignore_eos(config.ignore_eos);
  v1::SamplingParams* sampling = message.mutable_sampling();
  if (config.sampling.temperature) {
    sampling->set_temperature(*config.sampling.temperature);
  }
  if (config.sampling.top_k) {
    sampling->set_top_k(*config.sampling.top_k);
  }
  if (config.sampling.top_p) {
    sampling->set_top_p(*config.sampling.top_p);
  }
  if (config.sampling.min_p) {
    sampling->set_min_p(*config.sampling.min_p);
  }
  // Per-request seeds derived from --seed keep sampled runs repeatable.
  sampling->set_seed(config.seed * 1000003ULL + static_cast<std::uint64_t>(request.index));
  return message;
}

RunResult run_requests(v1::GenerateService::Stub& stub, BenchConfig const& config,
                       RunPlan const& plan, RandomRequestGenerator& generator,
                       ArrivalSchedule* schedule, ProgressBar& progress) {
  std::int64_t const streams =
      std::max<std::int64_t>(1, plan.count ? std::min(plan.streams, *plan.count) : plan.streams);
  DueQueue due(static_cast<std::size_t>(streams));
  std::mutex outcomes_mutex;
  RunResult result;
  Clock::time_point const run_start = Clock::now();

  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(streams));
  for (std::int64_t t = 0; t < streams; ++t) {
    threads.emplace_back([&] {
      while (std::optional<BenchRequest> request = due.pop()) {
        progress.request_started();
        RequestOutcome outcome =
            send_one(stub, config, *request,
                     plan.request_id_prefix + std::to_string(request->index), run_start);
        progress.request_finished(outcome.success);
        std::lock_guard<std::mutex> lock(outcomes_mutex);
        result.outcomes.push_back(std::move(outcome));
      }
    });
  }

  progress.start();
  for (std::int64_t sent = 0; !plan.count || sent < *plan.count; ++sent) {
    double const due_s = schedule != nullptr ? schedule->next_arrival_s() : 0.0;
    if (plan.duration_s && (due_s >= *plan.duration_s ||
                            seconds_between(run_start, Clock::now()) >= *plan.duration_s)) {
      break;
    }
    std::this_thread::sleep_until(run_start + std::chrono::duration_cast<Clock::duration>(
                                                  std::chrono::duration<double>(due_s)));
    due.push(generator.next());
  }
  due.close();
  for (std::thread& thread : threads) {
    thread.join();
  }
  result.duration_s = seconds_between(run_start, Clock::now());
  progress.stop();
  std::sort(result.outcomes.begin(), result.outcomes.end(),
            [](RequestOutcome const& a, RequestOutcome const& b) { return a.index < b.index; });
  return result;
}

}  // namespace gcmoe::client
