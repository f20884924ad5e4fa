// Randomized runs of the scheduler against its invariants: never over budget or over-committed,
// FIFO admission, no overtaking, every accepted sequence ends exactly once with a reason.
#include <map>
#include <random>
#include <set>
#include <vector>

#include "engine/scheduler/scheduler.h"
#include "tests/support/catch.h"

namespace gcmoe::scheduler {
namespace {

struct Tracker {
  std::map<SequenceId, SequenceSpec> accepted;
  std::vector<SequenceId> submit_order;
  std::vector<SequenceId> admit_order;
  std::map<SequenceId, int> finished_count;
  std::map<SequenceId, FinishReason> reason;
  std::map<SequenceId, int> sampled;  // tokens sampled per sequence, counted from the plans
};

void check_plan(Scheduler const& s, StepPlan const& plan, Tracker& t) {
  SchedulerConfig const& c = s.config();
  CHECK(plan.num_tokens <= c.max_batch_tokens);
  std::int32_t sum = 0;
  std::set<SequenceId> ids;
  bool seen_prefill = false;
  for (BatchEntry const& e : plan.entries) {
    sum += e.num_tokens;
    CHECK(ids.insert(e.id).second);  // one entry per sequence per step
    CHECK(e.num_tokens >= 1);
    CHECK((e.is_prefill || e.num_tokens == 1));
    if (e.is_prefill) {
      seen_prefill = true;
      CHECK(e.start_position + e.num_tokens <= t.accepted.at(e.id).prompt_tokens);
    } else {
      CHECK_FALSE(seen_prefill);  // decodes come first
    }
  }
  CHECK(sum == plan.num_tokens);
  SchedulerStats const st = s.stats();
  CHECK(st.running <= c.max_running_requests);
  CHECK(st.waiting <= c.max_waiting_requests);
  CHECK(st.kv_blocks_allocated <= st.kv_blocks_reserved);
  CHECK(st.kv_blocks_reserved <= st.kv_blocks_total);
  // Every running sequence that finished its prefill decodes in every step.
  t.admit_order.insert(t.admit_order.end(), plan.admitted.begin(), plan.admitted.end());
}

void drain(Scheduler& s, Tracker& t) {
  for (FinishedSequence const& f : s.drain_finished()) {
    ++t.finished_count[f.id];
    t.reason[f.id] = f.reason;
    SequenceSpec const& spec = t.accepted.at(f.id);
    CHECK(f.prompt_tokens == spec.prompt_tokens);
    CHECK(f.generated_tokens <= spec.max_new_tokens);
    CHECK(f.generated_tokens == t.sampled[f.id]);
    if (f.reason == FinishReason::kLength) {
      CHECK(f.generated_tokens == spec.max_new_tokens);
    }
  }
}

void run(std::uint64_t seed, SchedulerConfig const& config) {
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  auto const uniform = [&](int lo, int hi) { return std::uniform_int_distribution<>(lo, hi)(rng); };
  StatusOr<Scheduler> made = Scheduler::create(config);
  REQUIRE(made.ok());
  Scheduler& s = *made;
  Tracker t;
  SequenceId next_id = 1;
  int rejected_full = 0;
  for (int step = 0; step < 400; ++step) {
    for (int n = uniform(0, 3); n > 0 && step < 300; --n) {
      SequenceSpec const spec{next_id++, uniform(1, 40), uniform(1, 12)};
      Status const status = s.submit(spec);
      if (status.ok()) {
        t.accepted[spec.id] = spec;
        t.submit_order.push_back(spec.id);
      } else {
        CHECK(status.code() == StatusCode::kResourceExhausted);
        ++rejected_full;
      }
    }
    StatusOr<StepPlan> plan = s.plan_step();
    REQUIRE(plan.ok());
    check_plan(s, *plan, t);
    if (uniform(0, 9) == 0 && !t.submit_order.empty()) {  // abort anything, known or not
      (void)s.abort(t.submit_order[static_cast<std::size_t>(
          uniform(0, static_cast<int>(t.submit_order.size()) - 1))]);
    }
    std::vector<StopEvent> stops;
    for (BatchEntry const& e : plan->entries) {
      if (e.samples_token && t.finished_count[e.id] == 0 && s.block_table(e.id).ok()) {
        ++t.sampled[e.id];
        if (uniform(0, 19) == 0) {
          stops.push_back(
              {e.id, uniform(0, 1) == 0 ? FinishReason::kEos : FinishReason::kStopToken});
        }
      }
    }
    REQUIRE(s.complete_step(*plan, stops).ok());
    drain(s, t);
  }
  // Abort whatever is left: nothing may be lost.
  for (SequenceId const id : t.submit_order) {
    if (t.finished_count[id] == 0) {
      REQUIRE(s.abort(id).ok());
    }
  }
  drain(s, t);
  CHECK_FALSE(s.has_unfinished());
  CHECK(s.stats().kv_blocks_reserved == 0);
  CHECK(s.stats().kv_blocks_allocated == 0);
  for (SequenceId const id : t.submit_order) {
    INFO("sequence " << id);
    CHECK(t.finished_count[id] == 1);
  }
  CHECK(s.stats().finished == t.submit_order.size());
  // FIFO: admissions are a subsequence of submissions, in submission order.
  std::size_t cursor = 0;
  for (SequenceId const id : t.admit_order) {
    while (cursor < t.submit_order.size() && t.submit_order[cursor] != id) {
      ++cursor;
    }
    CHECK(cursor < t.submit_order.size());
  }
  // The mix exercised every ending.
  std::set<FinishReason> reasons;
  for (auto const& [id, r] : t.reason) {
    reasons.insert(r);
  }
  CHECK(reasons.size() == 4);
  if (config.max_waiting_requests <= 8) {
    CHECK(rejected_full > 0);
  }
}

TEST_CASE("randomized scheduling keeps every invariant") {
  SchedulerConfig tight;
  tight.max_waiting_requests = 8;
  tight.max_running_requests = 4;
  tight.max_batch_tokens = 16;
  tight.kv_blocks = 12;
  tight.kv_block_size = 8;
  SchedulerConfig roomy;
  roomy.max_waiting_requests = 64;
  roomy.max_running_requests = 16;
  roomy.max_batch_tokens = 48;
  roomy.kv_blocks = 64;
  roomy.kv_block_size = 4;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    run(seed, tight);
    run(seed, roomy);
  }
}

}  // namespace
}  // namespace gcmoe::scheduler
