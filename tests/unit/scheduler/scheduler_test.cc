#include "engine/scheduler/scheduler.h"

#include <vector>

#include "tests/support/catch.h"

namespace gcmoe::scheduler {
namespace {

Scheduler make(SchedulerConfig const& config) {
  StatusOr<Scheduler> s = Scheduler::create(config);
  REQUIRE(s.ok());
  return std::move(s).value();
}

StepPlan plan(Scheduler& s) {
  StatusOr<StepPlan> p = s.plan_step();
  REQUIRE(p.ok());
  return std::move(p).value();
}

void complete(Scheduler& s, StepPlan const& p, std::vector<StopEvent> const& stops = {}) {
  Status const status = s.complete_step(p, stops);
  INFO(status.to_string());
  REQUIRE(status.ok());
}

bool same(BatchEntry const& e, SequenceId id, std::int32_t start, std::int32_t n, bool prefill,
          bool samples) {
  return e.id == id && e.start_position == start && e.num_tokens == n && e.is_prefill == prefill &&
         e.samples_token == samples;
}

TEST_CASE("scheduler config is validated") {
  SchedulerConfig c;
  c.max_waiting_requests = 0;
  CHECK(Scheduler::create(c).status().code() == StatusCode::kInvalidArgument);
  c = {};
  c.max_running_requests = 0;
  CHECK(Scheduler::create(c).status().code() == StatusCode::kInvalidArgument);
  c = {};
  c.max_running_requests = 8;
  c.max_batch_tokens = 7;
  CHECK(Scheduler::create(c).status().code() == StatusCode::kInvalidArgument);
  c = {};
  c.kv_blocks = 0;
  CHECK(Scheduler::create(c).status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("one sequence: chunked prefill, first token on the last chunk, decodes, LENGTH") {
  SchedulerConfig c;
  c.max_batch_tokens = 4;
  c.max_running_requests = 2;
  c.kv_blocks = 4;
  c.kv_block_size = 4;
  Scheduler s = make(c);
  REQUIRE(s.submit({7, 10, 3}).ok());

  StepPlan p0 = plan(s);
  REQUIRE(p0.entries.size() == 1);
  CHECK(same(p0.entries[0], 7, 0, 4, true, false));
  CHECK(p0.admitted == std::vector<SequenceId>{7});
  CHECK(s.stats().kv_blocks_reserved == 4);  // ceil(13 / 4)
  CHECK(s.stats().kv_blocks_allocated == 1);
  complete(s, p0);
  StepPlan p1 = plan(s);
  CHECK(same(p1.entries.at(0), 7, 4, 4, true, false));
  complete(s, p1);
  StepPlan p2 = plan(s);
  CHECK(same(p2.entries.at(0), 7, 8, 2, true, true));
  CHECK(p2.num_tokens == 2);
  complete(s, p2);
  CHECK(s.drain_finished().empty());
  StepPlan p3 = plan(s);
  CHECK(same(p3.entries.at(0), 7, 10, 1, false, true));  // feeds token 1 at position 10
  complete(s, p3);
  StepPlan p4 = plan(s);
  CHECK(same(p4.entries.at(0), 7, 11, 1, false, true));
  CHECK(s.block_table(7)->size() == 3);  // positions 0..11
  complete(s, p4);

  std::vector<FinishedSequence> const done = s.drain_finished();
  REQUIRE(done.size() == 1);
  CHECK(done[0].id == 7);
  CHECK(done[0].reason == FinishReason::kLength);
  CHECK(done[0].prompt_tokens == 10);
  CHECK(done[0].generated_tokens == 3);
  CHECK(s.stats().kv_blocks_reserved == 0);
  CHECK(s.stats().kv_blocks_allocated == 0);
  CHECK_FALSE(s.has_unfinished());
  CHECK(plan(s).entries.empty());  // an idle rank still steps, with 0 tokens
}

TEST_CASE("decodes go first, prefill chunks fill the rest of the budget") {
  SchedulerConfig c;
  c.max_batch_tokens = 6;
  c.max_running_requests = 4;
  Scheduler s = make(c);
  REQUIRE(s.submit({1, 2, 5}).ok());
  StepPlan p0 = plan(s);
  complete(s, p0);  // 1 prefilled, first token sampled
  REQUIRE(s.submit({2, 9, 5}).ok());
  REQUIRE(s.submit({3, 9, 5}).ok());
  StepPlan p1 = plan(s);
  REQUIRE(p1.entries.size() == 2);
  CHECK(same(p1.entries[0], 1, 2, 1, false, true));
  CHECK(same(p1.entries[1], 2, 0, 5, true, false));
  CHECK(p1.admitted == std::vector<SequenceId>{2});  // no budget left for 3
  CHECK(p1.num_tokens == 6);
  complete(s, p1);
  StepPlan p2 = plan(s);
  REQUIRE(p2.entries.size() == 3);
  CHECK(same(p2.entries[0], 1, 3, 1, false, true));
  CHECK(same(p2.entries[1], 2, 5, 4, true, true));
  CHECK(same(p2.entries[2], 3, 0, 1, true, false));
  complete(s, p2);
}

TEST_CASE("admission is FIFO and gated by the KV reservation and the running cap") {
  SchedulerConfig c;
  c.max_running_requests = 2;
  c.max_batch_tokens = 64;
  c.kv_blocks = 4;
  c.kv_block_size = 8;  // 32 positions
  Scheduler s = make(c);
  REQUIRE(s.submit({1, 8, 8}).ok());   // 2 blocks
  REQUIRE(s.submit({2, 8, 16}).ok());  // 3 blocks: does not fit next to 1
  REQUIRE(s.submit({3, 4, 4}).ok());   // 1 block: would fit, but must not overtake 2
  StepPlan p0 = plan(s);
  CHECK(p0.admitted == std::vector<SequenceId>{1});
  CHECK(s.stats().waiting == 2);
  complete(s, p0, {{1, FinishReason::kEos}});
  std::vector<FinishedSequence> const done = s.drain_finished();
  REQUIRE(done.size() == 1);
  CHECK(done[0].reason == FinishReason::kEos);
  CHECK(done[0].generated_tokens == 1);
  StepPlan p1 = plan(s);
  CHECK(p1.admitted == std::vector<SequenceId>{2, 3});

  // The running cap: 2 running, a third waits even with KV to spare.
  Scheduler capped = make(c);
  REQUIRE(capped.submit({1, 1, 1}).ok());
  REQUIRE(capped.submit({2, 1, 1}).ok());
  REQUIRE(capped.submit({3, 1, 1}).ok());
  CHECK(plan(capped).admitted.size() == 2);
  CHECK(capped.stats().running == 2);
  CHECK(capped.stats().waiting == 1);
}

TEST_CASE("submit rejects bad specs, duplicates and a full queue") {
  SchedulerConfig c;
  c.max_waiting_requests = 2;
  c.kv_blocks = 2;
  c.kv_block_size = 4;
  Scheduler s = make(c);
  CHECK(s.submit({1, 0, 1}).code() == StatusCode::kInvalidArgument);
  CHECK(s.submit({1, 1, 0}).code() == StatusCode::kInvalidArgument);
  CHECK(s.submit({1, 5, 4}).code() == StatusCode::kInvalidArgument);  // 9 tokens > 8 positions
  REQUIRE(s.submit({1, 4, 4}).ok());
  CHECK(s.submit({1, 1, 1}).code() == StatusCode::kAlreadyExists);
  REQUIRE(s.submit({2, 1, 1}).ok());
  Status const full = s.submit({3, 1, 1});
  CHECK(full.code() == StatusCode::kResourceExhausted);
  CHECK(s.stats().waiting == 2);
  CHECK(s.drain_finished().empty());  // rejected submissions never "finish": they never began
}

TEST_CASE("abort ends waiting and running sequences once, mid-step included") {
  SchedulerConfig c;
  c.max_running_requests = 1;
  Scheduler s = make(c);
  REQUIRE(s.submit({1, 4, 8}).ok());
  REQUIRE(s.submit({2, 4, 8}).ok());
  StepPlan p0 = plan(s);
  REQUIRE(s.abort(2).ok());  // waiting
  REQUIRE(s.abort(1).ok());  // running, between plan and complete
  CHECK(s.abort(1).code() == StatusCode::kNotFound);
  CHECK(s.abort(99).code() == StatusCode::kNotFound);
  // A stop for the aborted sequence is tolerated; its entries are ignored.
  complete(s, p0, {{1, FinishReason::kStopToken}});
  std::vector<FinishedSequence> const done = s.drain_finished();
  REQUIRE(done.size() == 2);
  CHECK(done[0].id == 2);
  CHECK(done[0].reason == FinishReason::kAborted);
  CHECK(done[1].id == 1);
  CHECK(done[1].reason == FinishReason::kAborted);
  CHECK(done[1].generated_tokens == 0);
  CHECK(s.stats().kv_blocks_reserved == 0);
  CHECK_FALSE(s.has_unfinished());

  // An id aborted mid-step and resubmitted at once is a new sequence, untouched by the old plan.
  REQUIRE(s.submit({5, 2, 2}).ok());
  StepPlan p1 = plan(s);
  REQUIRE(s.abort(5).ok());
  REQUIRE(s.submit({5, 2, 2}).ok());
  complete(s, p1);
  StepPlan p2 = plan(s);
  CHECK(same(p2.entries.at(0), 5, 0, 2, true, true));
  complete(s, p2);
}

TEST_CASE("plan/complete protocol errors") {
  Scheduler s = make({});
  REQUIRE(s.submit({1, 2, 4}).ok());
  REQUIRE(s.submit({2, 2, 4}).ok());
  StepPlan p0 = plan(s);
  CHECK(s.plan_step().status().code() == StatusCode::kFailedPrecondition);
  StepPlan stale = p0;
  stale.step = 41;
  CHECK(s.complete_step(stale, {}).code() == StatusCode::kFailedPrecondition);
  std::vector<StopEvent> const bad_reason = {{1, FinishReason::kLength}};
  CHECK(s.complete_step(p0, bad_reason).code() == StatusCode::kInvalidArgument);
  std::vector<StopEvent> const not_sampled = {{3, FinishReason::kEos}};
  CHECK(s.complete_step(p0, not_sampled).code() == StatusCode::kInvalidArgument);
  complete(s, p0, {{2, FinishReason::kStopToken}});
  CHECK(s.complete_step(p0, {}).code() == StatusCode::kFailedPrecondition);
  std::vector<FinishedSequence> const done = s.drain_finished();
  REQUIRE(done.size() == 1);
  CHECK(done[0].id == 2);
  CHECK(done[0].reason == FinishReason::kStopToken);
}

}  // namespace
}  // namespace gcmoe::scheduler
