// The GC-MoE partition plan (kernels/moe/gc_partition_plan.h): bucket lookup, validation, the
// choice from measurements (including "no partition" where the split does not pay) and JSON.
#include "kernels/moe/gc_partition_plan.h"

#include <vector>

#include "tests/support/catch.h"

namespace gcmoe::kernels {
namespace {

TEST_CASE("Partition plan: lookup by token count") {
  auto plan = GcPartitionPlan::create({{1, 16}, {2, 0}, {64, 24}, {256, 8}});
  REQUIRE(plan.ok());
  CHECK(plan->comm_sms(1) == 16);
  CHECK(plan->comm_sms(2) == 0);
  CHECK(plan->comm_sms(3) == 24);
  CHECK(plan->comm_sms(64) == 24);
  CHECK(plan->comm_sms(65) == 8);
  CHECK(plan->comm_sms(1000) == 8);  // beyond the last step: the last step's choice
  CHECK(plan->comm_sizes() == std::vector<int>{8, 16, 24});
  CHECK(GcPartitionPlan::uniform(16).comm_sms(77) == 16);
}

TEST_CASE("Partition plan: bad steps are refused") {
  CHECK(GcPartitionPlan::create({}).status().code() == StatusCode::kInvalidArgument);
  CHECK(GcPartitionPlan::create({{4, 16}, {4, 8}}).status().code() == StatusCode::kInvalidArgument);
  CHECK(GcPartitionPlan::create({{0, 16}}).status().code() == StatusCode::kInvalidArgument);
  CHECK(GcPartitionPlan::create({{1, -8}}).status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("Partition plan: chosen from measurements, none where the split does not pay") {
  std::vector<GcPartitionMeasurement> const m = {
      {.tokens = 2, .sequential_us = 200.0, .gc_us = {{8, 220.0}, {16, 215.0}}},   // split loses
      {.tokens = 1, .sequential_us = 131.0, .gc_us = {{8, 125.0}, {16, 122.0}}},   // 16 wins
      {.tokens = 4, .sequential_us = 330.0, .gc_us = {{8, 329.0}, {16, 326.0}}},   // < 2%: none
      {.tokens = 8, .sequential_us = 600.0, .gc_us = {{8, 570.0}, {16, 580.0}}},   // 8 wins
      {.tokens = 16, .sequential_us = 900.0, .gc_us = {{8, 850.0}, {16, 870.0}}},  // 8 again
  };
  auto plan = GcPartitionPlan::choose(m, 1.02);
  REQUIRE(plan.ok());
  std::vector<GcPartitionStep> const want = {{1, 16}, {4, 0}, {16, 8}};
  CHECK(std::vector<GcPartitionStep>(plan->steps().begin(), plan->steps().end()) == want);
  // With any win counted, 4 tokens take the 16-SM split.
  auto eager = GcPartitionPlan::choose(m, 1.0);
  REQUIRE(eager.ok());
  CHECK(eager->comm_sms(4) == 16);
  CHECK(GcPartitionPlan::choose(m, 0.5).status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("Partition plan: the faster sequential placement where no split pays") {
  std::vector<GcPartitionMeasurement> const m = {
      {.tokens = 16, .sequential_us = 900.0, .sequential_separate_us = 930.0, .gc_us = {{8, 899}}},
      {.tokens = 64,
       .sequential_us = 2300.0,
       .sequential_separate_us = 1990.0,
       .gc_us = {{8, 1980.0}}},  // beats the fused placement by far, the separate one by < 2%
      {.tokens = 128,
       .sequential_us = 2690.0,
       .sequential_separate_us = 2255.0,
       .gc_us = {{8, 2100.0}}},  // beats both
  };
  auto plan = GcPartitionPlan::choose(m, 1.02);
  REQUIRE(plan.ok());
  std::vector<GcPartitionStep> const want = {{16, 0, false}, {64, 0, true}, {128, 8, false}};
  CHECK(std::vector<GcPartitionStep>(plan->steps().begin(), plan->steps().end()) == want);
  CHECK(plan->step(40).shared_separate);
  CHECK_FALSE(plan->step(10).shared_separate);
}

TEST_CASE("Partition plan: the overlapped body where it won every pair and no split pays") {
  std::vector<GcPartitionMeasurement> const m = {
      // Won every pair and no split beats it: overlapped.
      {.tokens = 2,
       .sequential_us = 180.0,
       .gc_us = {{16, 182.0}},
       .overlapped_us = 176.0,
       .overlapped_won_every_round = true},
      // Faster by the median but not in every pair: the sequential graph.
      {.tokens = 16, .sequential_us = 870.0, .overlapped_us = 868.0},
      // A split beating the sequential graph by 2% but not the overlapped body: overlapped.
      {.tokens = 32,
       .sequential_us = 1000.0,
       .gc_us = {{8, 975.0}},
       .overlapped_us = 960.0,
       .overlapped_won_every_round = true},
      // A split beating both: the split.
      {.tokens = 64,
       .sequential_us = 1000.0,
       .gc_us = {{8, 950.0}},
       .overlapped_us = 990.0,
       .overlapped_won_every_round = true},
      // Shared expert faster apart, overlapped wins: the step is overlapped, not shared_separate.
      {.tokens = 128,
       .sequential_us = 2300.0,
       .sequential_separate_us = 2000.0,
       .overlapped_us = 1990.0,
       .overlapped_won_every_round = true},
  };
  auto plan = GcPartitionPlan::choose(m, 1.02);
  REQUIRE(plan.ok());
  std::vector<GcPartitionStep> const want = {{.max_tokens = 2, .overlapped = true},
                                             {.max_tokens = 16},
                                             {.max_tokens = 32, .overlapped = true},
                                             {.max_tokens = 64, .comm_sms = 8},
                                             {.max_tokens = 128, .overlapped = true}};
  CHECK(std::vector<GcPartitionStep>(plan->steps().begin(), plan->steps().end()) == want);
  CHECK(plan->step(1).overlapped);
  CHECK_FALSE(plan->step(10).overlapped);
  // A step cannot be both a split and the overlapped body.
  CHECK(GcPartitionPlan::create({{.max_tokens = 4, .comm_sms = 16, .overlapped = true}})
            .status()
            .code() == StatusCode::kInvalidArgument);
}

TEST_CASE("Partition plan: L2 without PDL where the chosen graph lost to itself with it") {
  std::vector<GcPartitionMeasurement> m = {
      // A split, PDL kept.
      {.tokens = 1, .sequential_us = 120.0, .gc_us = {{16, 100.0}}},
      // The same split, but it ran faster without PDL in every pair: a step of its own.
      {.tokens = 2,
       .sequential_us = 150.0,
       .gc_us = {{16, 130.0}},
       .without_pdl_won_every_round = true},
      // The overlapped body without PDL.
      {.tokens = 128,
       .sequential_us = 2300.0,
       .overlapped_us = 2200.0,
       .overlapped_won_every_round = true,
       .without_pdl_won_every_round = true},
      // The sequential graph has no PDL: the flag does not make a step of its own.
      {.tokens = 256, .sequential_us = 4000.0, .without_pdl_won_every_round = true},
      {.tokens = 512, .sequential_us = 8000.0},
  };
  auto plan = GcPartitionPlan::choose(m, 1.02);
  REQUIRE(plan.ok());
  std::vector<GcPartitionStep> const want = {
      {.max_tokens = 1, .comm_sms = 16},
      {.max_tokens = 2, .comm_sms = 16, .overlap_down = false},
      {.max_tokens = 128, .overlapped = true, .overlap_down = false},
      {.max_tokens = 512}};
  CHECK(std::vector<GcPartitionStep>(plan->steps().begin(), plan->steps().end()) == want);
  CHECK(plan->step(1).overlap_down);
  CHECK_FALSE(plan->step(2).overlap_down);
  CHECK(plan->step(300).overlap_down);
  // Without any PDL verdict the choice is the same with PDL everywhere (the bench's first pass).
  for (GcPartitionMeasurement& x : m) {
    x.without_pdl_won_every_round = false;
  }
  auto first = GcPartitionPlan::choose(m, 1.02);
  REQUIRE(first.ok());
  for (GcPartitionStep const& step : first->steps()) {
    CHECK(step.overlap_down);
  }
  CHECK(first->steps().size() == 3);
}

TEST_CASE("Partition plan: the overlapped body with L2 by PDL or plainly, the faster candidate") {
  std::vector<GcPartitionMeasurement> const m = {
      // Only L2 plainly won every pair (the MXFP4 layer at T=1): overlapped, L2 plainly.
      {.tokens = 1,
       .sequential_us = 66.7,
       .overlapped_us = 71.4,
       .overlapped_plain_us = 65.8,
       .overlapped_plain_won_every_round = true},
      // Both won; PDL is faster.
      {.tokens = 2,
       .sequential_us = 95.0,
       .overlapped_us = 92.0,
       .overlapped_won_every_round = true,
       .overlapped_plain_us = 93.5,
       .overlapped_plain_won_every_round = true},
      // Both won; plainly is faster.
      {.tokens = 4,
       .sequential_us = 155.0,
       .overlapped_us = 150.0,
       .overlapped_won_every_round = true,
       .overlapped_plain_us = 148.0,
       .overlapped_plain_won_every_round = true},
      // The plain body is faster but lost a pair: not a candidate, PDL's is.
      {.tokens = 8,
       .sequential_us = 250.0,
       .overlapped_us = 245.0,
       .overlapped_won_every_round = true,
       .overlapped_plain_us = 240.0},
      // A split beating both by more than min_gain keeps L2 by PDL.
      {.tokens = 16,
       .sequential_us = 420.0,
       .gc_us = {{8, 380.0}},
       .overlapped_plain_us = 400.0,
       .overlapped_plain_won_every_round = true},
      // Neither won: the sequential graph.
      {.tokens = 32, .sequential_us = 700.0, .overlapped_us = 705.0, .overlapped_plain_us = 702.0},
  };
  auto plan = GcPartitionPlan::choose(m, 1.02);
  REQUIRE(plan.ok());
  std::vector<GcPartitionStep> const want = {
      {.max_tokens = 1, .overlapped = true, .overlap_down = false},
      {.max_tokens = 2, .overlapped = true},
      {.max_tokens = 4, .overlapped = true, .overlap_down = false},
      {.max_tokens = 8, .overlapped = true},
      {.max_tokens = 16, .comm_sms = 8},
      {.max_tokens = 32}};
  CHECK(std::vector<GcPartitionStep>(plan->steps().begin(), plan->steps().end()) == want);
  // A negative time is a bad measurement.
  std::vector<GcPartitionMeasurement> bad = {
      {.tokens = 1, .sequential_us = 10.0, .overlapped_plain_us = -1.0}};
  CHECK(GcPartitionPlan::choose(bad, 1.02).status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("Partition plan: L2 by rows where it won every pair against L2 by PDL") {
  std::vector<GcPartitionMeasurement> const m = {
      // A split whose L2 by rows won every pair.
      {.tokens = 1,
       .sequential_us = 120.0,
       .gc_us = {{16, 100.0}},
       .by_rows_won_every_round = true},
      // The overlapped body, L2 by PDL, by rows won.
      {.tokens = 8,
       .sequential_us = 520.0,
       .overlapped_us = 510.0,
       .overlapped_won_every_round = true,
       .by_rows_won_every_round = true},
      // L2 plainly won too: plainly it is (by rows needs PDL).
      {.tokens = 16,
       .sequential_us = 900.0,
       .gc_us = {{8, 860.0}},
       .without_pdl_won_every_round = true,
       .by_rows_won_every_round = true},
      // The overlapped body's plain candidate: no PDL, so no rows.
      {.tokens = 32,
       .sequential_us = 1500.0,
       .overlapped_plain_us = 1480.0,
       .overlapped_plain_won_every_round = true,
       .by_rows_won_every_round = true},
      // The sequential graph has no PDL: the flag does not make a step of its own.
      {.tokens = 64, .sequential_us = 2000.0, .by_rows_won_every_round = true},
      // A split where by rows lost a pair.
      {.tokens = 128, .sequential_us = 2300.0, .gc_us = {{24, 2200.0}}},
  };
  auto plan = GcPartitionPlan::choose(m, 1.02);
  REQUIRE(plan.ok());
  std::vector<GcPartitionStep> const want = {
      {.max_tokens = 1, .comm_sms = 16, .down_by_rows = true},
      {.max_tokens = 8, .overlapped = true, .down_by_rows = true},
      {.max_tokens = 16, .comm_sms = 8, .overlap_down = false},
      {.max_tokens = 32, .overlapped = true, .overlap_down = false},
      {.max_tokens = 64},
      {.max_tokens = 128, .comm_sms = 24}};
  CHECK(std::vector<GcPartitionStep>(plan->steps().begin(), plan->steps().end()) == want);
  // By rows is a kind of L2 by PDL in a GC-MoE graph: refused without either.
  CHECK(GcPartitionPlan::create(
            {{.max_tokens = 1, .comm_sms = 8, .overlap_down = false, .down_by_rows = true}})
            .status()
            .code() == StatusCode::kInvalidArgument);
  CHECK(GcPartitionPlan::create({{.max_tokens = 1, .down_by_rows = true}}).status().code() ==
        StatusCode::kInvalidArgument);
}

TEST_CASE("Partition plan: JSON round trip and bad JSON") {
  auto plan = GcPartitionPlan::create({{1, 16},
                                       {2, 0, true},
                                       {8, 0, false, true},
                                       {16, 8, false, false, false},
                                       {32, 8, false, false, true, true},
                                       {256, 24}});
  REQUIRE(plan.ok());
  auto back = GcPartitionPlan::from_json(plan->to_json());
  REQUIRE(back.ok());
  CHECK(std::vector<GcPartitionStep>(back->steps().begin(), back->steps().end()) ==
        std::vector<GcPartitionStep>(plan->steps().begin(), plan->steps().end()));
  CHECK(back->step(2).shared_separate);
  CHECK(back->step(5).overlapped);
  CHECK_FALSE(back->step(12).overlap_down);
  CHECK(back->step(100).overlap_down);
  CHECK(back->step(20).down_by_rows);
  CHECK_FALSE(back->step(100).down_by_rows);
  // Plans written before "overlapped" existed read as the sequential graph, before
  // "overlap_down" with L2 by PDL, and before "down_by_rows" with L2 waiting for L1's grid.
  auto old = GcPartitionPlan::from_json(
      "{\"steps\": [{\"max_tokens\": 4, \"comm_sms\": 0, \"shared_separate\": true}]}");
  REQUIRE(old.ok());
  CHECK_FALSE(old->step(4).overlapped);
  CHECK(old->step(4).overlap_down);
  CHECK_FALSE(old->step(4).down_by_rows);
  CHECK(GcPartitionPlan::from_json(
            "{\"steps\": [{\"max_tokens\": 1, \"comm_sms\": 8, \"down_by_rows\": 1}]}")
            .status()
            .code() == StatusCode::kInvalidArgument);
  CHECK(GcPartitionPlan::from_json(
            "{\"steps\": [{\"max_tokens\": 1, \"comm_sms\": 8, \"overlap_down\": 0}]}")
            .status()
            .code() == StatusCode::kInvalidArgument);
  CHECK(GcPartitionPlan::from_json(
            "{\"steps\": [{\"max_tokens\": 1, \"comm_sms\": 0, \"overlapped\": \"yes\"}]}")
            .status()
            .code() == StatusCode::kInvalidArgument);
  CHECK(GcPartitionPlan::from_json("not json").status().code() == StatusCode::kInvalidArgument);
  CHECK(GcPartitionPlan::from_json(
            "{\"steps\": [{\"max_tokens\": 1, \"comm_sms\": 0, \"shared_separate\": 1}]}")
            .status()
            .code() == StatusCode::kInvalidArgument);
  CHECK(GcPartitionPlan::from_json("{\"steps\": 3}").status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(GcPartitionPlan::from_json("{\"steps\": [{\"max_tokens\": 1}]}").status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(GcPartitionPlan::from_json("{\"steps\": [{\"max_tokens\": 2, \"comm_sms\": 8}, "
                                   "{\"max_tokens\": 1, \"comm_sms\": 8}]}")
            .status()
            .code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gcmoe::kernels
