#include "engine/runtime/rank_engine.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "engine/runtime/shm_communicator.h"
#include "engine/runtime/single_rank_communicator.h"
#include "engine/sampling/sampler.h"
#include "tests/support/catch.h"
#include "tests/unit/runtime/test_step_model.h"

namespace gcmoe::runtime {
namespace {

using scheduler::FinishReason;
using testing::TestStepModel;
using testing::TestStepModelOptions;

// What the callbacks of every request reported.
struct Outcomes {
  std::mutex mutex;
  std::map<scheduler::SequenceId, std::vector<std::int32_t>> tokens;
  std::map<scheduler::SequenceId, SequenceResult> results;
  std::map<scheduler::SequenceId, int> finish_calls;

  std::size_t finished() {
    std::lock_guard<std::mutex> const lock(mutex);
    return results.size();
  }
};

RankRequest make_request(Outcomes& out, scheduler::SequenceId id, std::vector<std::int32_t> prompt,
                         std::int32_t max_new, std::uint64_t seed, float temperature = 1.0f) {
  RankRequest r;
  r.id = id;
  r.prompt = std::move(prompt);
  r.max_new_tokens = max_new;
  r.sampling.seed = seed;
  r.sampling.temperature = temperature;
  r.on_tokens = [&out, id](std::span<std::int32_t const> tokens) {
    std::lock_guard<std::mutex> const lock(out.mutex);
    auto& v = out.tokens[id];
    v.insert(v.end(), tokens.begin(), tokens.end());
  };
  r.on_finished = [&out, id](SequenceResult const& result) {
    std::lock_guard<std::mutex> const lock(out.mutex);
    out.results[id] = result;
    ++out.finish_calls[id];
  };
  return r;
}

// The tokens a request must produce, sampled directly from the double's reference logits.
std::vector<std::int32_t> reference_decode(RankRequest const& r, std::int32_t vocab,
                                           std::vector<std::uint32_t> const& eos) {
  std::vector<std::int32_t> sequence = r.prompt;
  std::vector<std::int32_t> output;
  while (static_cast<std::int32_t>(output.size()) < r.max_new_tokens) {
    std::vector<float> const logits = TestStepModel::reference_logits(sequence, vocab);
    StatusOr<std::int32_t> const token =
        sampling::sample_token(logits, r.sampling, {r.prompt, output});
    REQUIRE(token.ok());
    output.push_back(*token);
    sequence.push_back(*token);
    bool const is_eos =
        std::find(eos.begin(), eos.end(), static_cast<std::uint32_t>(*token)) != eos.end();
    if (std::find(r.stop_token_ids.begin(), r.stop_token_ids.end(), *token) !=
            r.stop_token_ids.end() ||
        (is_eos && !r.ignore_eos)) {
      break;
    }
  }
  return output;
}

std::unique_ptr<RankEngine> make_engine(TestStepModel& model, Communicator& comm,
                                        scheduler::SchedulerConfig sched = {}) {
  RankEngineConfig config;
  sched.kv_blocks = 256;
  sched.kv_block_size = 4;
  config.scheduler = sched;
  config.idle_wait = std::chrono::microseconds(200);
  StatusOr<std::unique_ptr<RankEngine>> engine = RankEngine::create(config, model, comm);
  REQUIRE(engine.ok());
  return std::move(engine).value();
}

void run_until(RankEngine& engine, std::function<bool()> const& done) {
  for (int i = 0; i < 100000 && !done(); ++i) {
    StatusOr<LoopState> const state = engine.step_once();
    REQUIRE(state.ok());
  }
  REQUIRE(done());
}

TEST_CASE("RankEngine: a continuous batch decodes each request as it would alone") {
  SingleRankCommunicator comm;
  TestStepModelOptions options;
  TestStepModel model(options, comm);
  scheduler::SchedulerConfig sched;
  sched.max_batch_tokens = 16;  // long prompts prefill in chunks next to running decodes
  sched.max_running_requests = 8;
  auto engine = make_engine(model, comm, sched);
  Outcomes out;
  std::vector<RankRequest> expected;
  for (std::uint64_t i = 0; i < 12; ++i) {
    std::vector<std::int32_t> prompt;
    for (std::uint64_t t = 0; t < 3 + (i * 7) % 29; ++t) {
      prompt.push_back(static_cast<std::int32_t>((i * 13 + t * 5) % 60));
    }
    RankRequest r = make_request(out, 100 + i, prompt, 5 + static_cast<std::int32_t>(i % 9),
                                 1000 + i, i % 3 == 0 ? 0.0f : 0.8f);
    r.sampling.top_k = i % 2 == 0 ? 0 : 20;
    r.ignore_eos = true;
    RankRequest copy = r;
    expected.push_back(std::move(copy));
    REQUIRE(engine->submit(std::move(r)).ok());
  }
  run_until(*engine, [&] { return out.finished() == expected.size(); });
  for (RankRequest const& r : expected) {
    INFO("request " << r.id);
    CHECK(out.tokens[r.id] == reference_decode(r, options.vocab_size, options.eos_token_ids));
    CHECK(out.results[r.id].reason == FinishReason::kLength);
    CHECK(out.results[r.id].generated_tokens == r.max_new_tokens);
    CHECK(out.results[r.id].prompt_tokens == static_cast<std::int32_t>(r.prompt.size()));
    CHECK(out.finish_calls[r.id] == 1);
  }
  CHECK(engine->stats().scheduler.running == 0);
  CHECK(engine->stats().scheduler.kv_blocks_reserved == 0);
}

TEST_CASE("RankEngine: stop tokens, EOS and ignore_eos") {
  SingleRankCommunicator comm;
  TestStepModelOptions options;
  TestStepModel model(options, comm);
  auto engine = make_engine(model, comm);
  Outcomes out;
  // Find what the greedy decode of a prompt produces, then stop on its third token.
  RankRequest probe = make_request(out, 1, {1, 2, 3}, 8, 7, 0.0f);
  probe.ignore_eos = true;
  std::vector<std::int32_t> const free_run =
      reference_decode(probe, options.vocab_size, options.eos_token_ids);
  REQUIRE(free_run.size() == 8);

  RankRequest stop = make_request(out, 2, {1, 2, 3}, 8, 7, 0.0f);
  stop.ignore_eos = true;
  stop.stop_token_ids = {free_run[2]};
  std::size_t const first = static_cast<std::size_t>(
      std::find(free_run.begin(), free_run.end(), free_run[2]) - free_run.begin());
  REQUIRE(engine->submit(std::move(stop)).ok());

  // EOS: a model whose EOS is the greedy run's second token.
  TestStepModelOptions eos_options = options;
  eos_options.eos_token_ids = {static_cast<std::uint32_t>(free_run[1])};
  TestStepModel eos_model(eos_options, comm);
  auto eos_engine = make_engine(eos_model, comm);
  REQUIRE(eos_engine->submit(make_request(out, 3, {1, 2, 3}, 8, 7, 0.0f)).ok());
  RankRequest ignore = make_request(out, 4, {1, 2, 3}, 8, 7, 0.0f);
  ignore.ignore_eos = true;
  REQUIRE(eos_engine->submit(std::move(ignore)).ok());

  run_until(*engine, [&] { return out.results.contains(2); });
  run_until(*eos_engine, [&] { return out.finished() == 3; });
  CHECK(out.results[2].reason == FinishReason::kStopToken);
  CHECK(out.tokens[2] == std::vector<std::int32_t>(free_run.begin(), free_run.begin() + first + 1));
  std::size_t const eos_at = static_cast<std::size_t>(
      std::find(free_run.begin(), free_run.end(), free_run[1]) - free_run.begin());
  CHECK(out.results[3].reason == FinishReason::kEos);
  CHECK(out.tokens[3] ==
        std::vector<std::int32_t>(free_run.begin(), free_run.begin() + eos_at + 1));
  CHECK(out.results[4].reason == FinishReason::kLength);
  CHECK(out.tokens[4] == free_run);
}

TEST_CASE("RankEngine: abort ends one request, the others continue") {
  SingleRankCommunicator comm;
  TestStepModel model({}, comm);
  auto engine = make_engine(model, comm);
  Outcomes out;
  RankRequest a = make_request(out, 1, {5, 6}, 50, 1);
  a.ignore_eos = true;
  RankRequest b = make_request(out, 2, {7, 8}, 10, 2);
  b.ignore_eos = true;
  REQUIRE(engine->submit(std::move(a)).ok());
  REQUIRE(engine->submit(std::move(b)).ok());
  for (int i = 0; i < 3; ++i) {
    REQUIRE(engine->step_once().ok());
  }
  REQUIRE(engine->abort(1).ok());
  CHECK(engine->abort(1).code() == StatusCode::kNotFound);
  CHECK(engine->abort(99).code() == StatusCode::kNotFound);
  run_until(*engine, [&] { return out.finished() == 2; });
  CHECK(out.results[1].reason == FinishReason::kAborted);
  CHECK(out.results[1].error.ok());
  CHECK(out.tokens[1].size() == 3);
  CHECK(out.results[2].reason == FinishReason::kLength);
  CHECK(out.tokens[2].size() == 10);
}

TEST_CASE("RankEngine: submit rejects bad requests and a full queue") {
  SingleRankCommunicator comm;
  TestStepModel model({}, comm);
  scheduler::SchedulerConfig sched;
  sched.max_waiting_requests = 2;
  auto engine = make_engine(model, comm, sched);
  Outcomes out;
  CHECK(engine->submit(make_request(out, 1, {}, 4, 1)).code() == StatusCode::kInvalidArgument);
  CHECK(engine->submit(make_request(out, 1, {64}, 4, 1)).code() == StatusCode::kInvalidArgument);
  CHECK(engine->submit(make_request(out, 1, {1}, 0, 1)).code() == StatusCode::kInvalidArgument);
  CHECK(engine->submit(make_request(out, 1, {1}, 600, 1)).code() == StatusCode::kInvalidArgument);
  RankRequest no_seed = make_request(out, 1, {1}, 4, 1);
  no_seed.sampling.seed.reset();
  CHECK(engine->submit(std::move(no_seed)).code() == StatusCode::kInvalidArgument);
  REQUIRE(engine->submit(make_request(out, 1, {1}, 4, 1)).ok());
  CHECK(engine->submit(make_request(out, 1, {1}, 4, 1)).code() == StatusCode::kAlreadyExists);
  REQUIRE(engine->submit(make_request(out, 2, {1}, 4, 1)).ok());
  CHECK(engine->submit(make_request(out, 3, {1}, 4, 1)).code() == StatusCode::kResourceExhausted);
  run_until(*engine, [&] { return out.finished() == 2; });
  CHECK(out.finish_calls.size() == 2);  // rejected requests never call back
}

TEST_CASE("RankEngine: a model failure ends every request with the error") {
  SingleRankCommunicator comm;
  TestStepModelOptions options;
  options.fail_at_step = 3;
  TestStepModel model(options, comm);
  auto engine = make_engine(model, comm);
  Outcomes out;
  REQUIRE(engine->submit(make_request(out, 1, {1, 2}, 20, 1)).ok());
  REQUIRE(engine->submit(make_request(out, 2, {3, 4}, 20, 2)).ok());
  Status const status = engine->run();
  CHECK(status.code() == StatusCode::kInternal);
  REQUIRE(out.finished() == 2);
  for (auto const& [id, result] : out.results) {
    CHECK(result.reason == FinishReason::kAborted);
    CHECK(result.error.code() == StatusCode::kInternal);
  }
  CHECK(engine->submit(make_request(out, 3, {1}, 4, 1)).code() == StatusCode::kUnavailable);
}

TEST_CASE("RankEngine: submit and abort from many threads while the loop runs") {
  SingleRankCommunicator comm;
  TestStepModel model({}, comm);
  scheduler::SchedulerConfig sched;
  sched.max_running_requests = 8;
  sched.max_waiting_requests = 64;
  auto engine = make_engine(model, comm, sched);
  Outcomes out;
  Status loop_status;
  std::thread loop([&] { loop_status = engine->run(); });
  constexpr int kThreads = 4;
  constexpr int kPerThread = 12;
  std::atomic<int> accepted{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < kThreads; ++t) {
    clients.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        scheduler::SequenceId const id = static_cast<scheduler::SequenceId>(t * 100 + i + 1);
        RankRequest r = make_request(out, id, {t + 1, i + 1}, 6, id);
        r.ignore_eos = true;
        if (engine->submit(std::move(r)).ok()) {
          ++accepted;
        }
        if (i % 3 == 0) {
          (void)engine->abort(id);  // may already be done: NOT_FOUND is fine
        }
      }
    });
  }
  for (auto& c : clients) {
    c.join();
  }
  for (int i = 0; i < 5000 && out.finished() < static_cast<std::size_t>(accepted.load()); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  engine->request_stop();
  loop.join();
  CHECK(loop_status.ok());
  CHECK(accepted == kThreads * kPerThread);
  REQUIRE(out.finished() == static_cast<std::size_t>(accepted.load()));
  std::lock_guard<std::mutex> const lock(out.mutex);
  for (auto const& [id, result] : out.results) {
    CHECK(out.finish_calls[id] == 1);
    if (result.reason == FinishReason::kLength) {
      CHECK(out.tokens[id].size() == 6);
    } else {
      CHECK(result.reason == FinishReason::kAborted);
    }
  }
}

TEST_CASE("RankEngine: ranks step in lockstep; a rank without work joins with empty batches") {
  std::string const name = "/gcmoe-test-lockstep-" + std::to_string(::getpid());
  constexpr int kWorld = 3;
  std::vector<std::unique_ptr<ShmCommunicator>> comms(kWorld);
  {
    std::vector<std::thread> joins;
    for (int r = 0; r < kWorld; ++r) {
      joins.emplace_back([&, r] {
        ShmCommunicatorOptions o;
        o.name = name;
        o.session = 42;
        o.rank = r;
        o.world_size = kWorld;
        o.slot_bytes = 4096;
        o.timeout = std::chrono::milliseconds(5000);
        auto made = ShmCommunicator::create(o);
        if (made.ok()) {
          comms[static_cast<std::size_t>(r)] = std::move(made).value();
        }
      });
    }
    for (auto& t : joins) {
      t.join();
    }
  }
  for (auto const& c : comms) {
    REQUIRE(c != nullptr);
  }
  std::vector<std::unique_ptr<TestStepModel>> models;
  std::vector<std::unique_ptr<RankEngine>> engines;
  for (int r = 0; r < kWorld; ++r) {
    models.push_back(std::make_unique<TestStepModel>(TestStepModelOptions{}, *comms[r]));
    engines.push_back(make_engine(*models.back(), *comms[r]));
  }
  Outcomes out;
  // Only rank 0 gets work (rank 2 gets a short one): ranks 1 and 2 must still join every step.
  RankRequest r0 = make_request(out, 1, {1, 2, 3}, 12, 9);
  r0.ignore_eos = true;
  RankRequest const expected = r0;
  REQUIRE(engines[0]->submit(std::move(r0)).ok());
  RankRequest r2 = make_request(out, 2, {4}, 2, 9);
  r2.ignore_eos = true;
  REQUIRE(engines[2]->submit(std::move(r2)).ok());

  std::vector<Status> results(kWorld);
  std::vector<std::thread> loops;
  for (int r = 0; r < kWorld; ++r) {
    loops.emplace_back([&, r] { results[static_cast<std::size_t>(r)] = engines[r]->run(); });
  }
  for (int i = 0; i < 2000 && out.finished() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  engines[1]->request_stop();  // any rank's stop stops the group
  for (auto& t : loops) {
    t.join();
  }
  for (Status const& s : results) {
    CHECK(s.ok());
  }
  REQUIRE(out.finished() == 2);
  CHECK(out.tokens[1] == reference_decode(expected, 64, {63}));
  CHECK(models[0]->steps() == models[1]->steps());
  CHECK(models[1]->steps() == models[2]->steps());
  CHECK(models[1]->empty_steps() == models[1]->steps());
  CHECK(models[0]->steps() >= 12);
}

}  // namespace
}  // namespace gcmoe::runtime
