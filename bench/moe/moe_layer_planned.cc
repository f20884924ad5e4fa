#include "bench/moe/moe_layer_planned.h"

#include <fmt/format.h>

#include <cstddef>

#include "bench/common/clock_stats.h"
#include "bench/common/paired_rounds.h"
#include "engine/common/check.h"

namespace gcmoe::bench {
namespace {

// How L2 starts: the first plan's GC-MoE graph at each such point without PDL, and with L2
// acquiring L1's rows (down_by_rows), each against itself with L2 by PDL waiting for L1's grid, in
// pairs; marks the points where either won every pair.
Status mark_l2_launch_choices(LayerRig& rig, bool with_shared_expert,
                              kernels::MoeLayerDeviceWeights const& weights,
                              kernels::GcPartitionPlan const& first_plan,
                              std::vector<kernels::GcPartitionMeasurement>& measured,
                              std::vector<nlohmann::json*> const& points,
                              LayerTiming const& timing) {
  GCMOE_ASSIGN_OR_RETURN(
      auto with_pdl,
      kernels::GcMoeLayer::create(rig.config, kLayerBenchMaxTokens, 0, {.plan = first_plan}));
  GCMOE_ASSIGN_OR_RETURN(auto without_pdl,
                         kernels::GcMoeLayer::create(rig.config, kLayerBenchMaxTokens, 0,
                                                     {.plan = first_plan, .overlap_down = false}));
  // The first plan with L2 by rows wherever it launches L2 by PDL in a GC-MoE graph.
  std::vector<kernels::GcPartitionStep> rows_steps(first_plan.steps().begin(),
                                                   first_plan.steps().end());
  for (kernels::GcPartitionStep& step : rows_steps) {
    step.down_by_rows = step.overlap_down && (step.comm_sms > 0 || step.overlapped);
  }
  GCMOE_ASSIGN_OR_RETURN(auto const rows_plan, kernels::GcPartitionPlan::create(rows_steps));
  GCMOE_ASSIGN_OR_RETURN(auto by_rows, kernels::GcMoeLayer::create(rig.config, kLayerBenchMaxTokens,
                                                                   0, {.plan = rows_plan}));
  for (std::size_t i = 0; i < measured.size(); ++i) {
    int const tokens = measured[i].tokens;
    kernels::GcPartitionStep const& step = first_plan.step(tokens);
    if (step.comm_sms == 0 && !step.overlapped) {
      continue;  // the sequential graph: no PDL
    }
    if (!step.overlap_down) {
      // The overlapped body's plain candidate: already L2 after L1 in both layers, and already
      // timed against its PDL twin in pairs with the sequential graph.
      continue;
    }
    GCMOE_ASSIGN_OR_RETURN(PairedSummary const pdl,
                           time_gc_pairs(without_pdl, with_pdl, weights, rig.x.data(),
                                         rig.out.data(), tokens, timing));
    measured[i].without_pdl_won_every_round = pdl.won_every_round();
    (*points[i])["l2_without_pdl_in_pairs"] = paired_json(pdl, "without_pdl", "with_pdl");
    fmt::print("{} {:>4} L2 without PDL in pairs: {:.3f}x ({:.3f}-{:.3f}, faster in {}/{})\n",
               layer_row_label(with_shared_expert), tokens, pdl.speedup, pdl.speedup_min,
               pdl.speedup_max, pdl.rounds_won, pdl.rounds);
    GCMOE_ASSIGN_OR_RETURN(
        PairedSummary const rows,
        time_gc_pairs(by_rows, with_pdl, weights, rig.x.data(), rig.out.data(), tokens, timing));
    measured[i].by_rows_won_every_round = rows.won_every_round();
    (*points[i])["l2_by_rows_in_pairs"] = paired_json(rows, "by_rows", "with_pdl");
    fmt::print("{} {:>4} L2 by rows in pairs:     {:.3f}x ({:.3f}-{:.3f}, faster in {}/{})\n",
               layer_row_label(with_shared_expert), tokens, rows.speedup, rows.speedup_min,
               rows.speedup_max, rows.rounds_won, rows.rounds);
  }
  return Status();
}

}  // namespace

StatusOr<kernels::GcPartitionPlan> plan_and_time(
    LayerRig& rig, bool with_shared_expert, std::vector<kernels::GcPartitionMeasurement>& measured,
    std::vector<SequentialBaseline> const& baselines, std::vector<nlohmann::json*> const& points,
    PointSettings const& settings, GpuClockSampler& clock, cudaStream_t stream) {
  char const* const label = layer_row_label(with_shared_expert);
  LayerTiming const& timing = settings.timing;
  kernels::MoeLayerDeviceWeights const weights = rig.weights(with_shared_expert);
  // The per-bucket plan this run's sweep picks (no partition where no size wins by min_gain),
  // then that plan's layer timed again at every point: its own measurement, not the sweep's best.
  GCMOE_ASSIGN_OR_RETURN(auto const first_plan,
                         kernels::GcPartitionPlan::choose(measured, settings.min_gain));
  GCMOE_RETURN_IF_ERROR(mark_l2_launch_choices(rig, with_shared_expert, weights, first_plan,
                                               measured, points, timing));
  GCMOE_ASSIGN_OR_RETURN(auto plan, kernels::GcPartitionPlan::choose(measured, settings.min_gain));
  GCMOE_ASSIGN_OR_RETURN(auto planned, kernels::GcMoeLayer::create(rig.config, kLayerBenchMaxTokens,
                                                                   0, {.plan = plan}));
  fmt::print("{} planned: {}\n", label, nlohmann::json::parse(plan.to_json())["steps"].dump());
  for (std::size_t i = 0; i < measured.size(); ++i) {
    int const tokens = measured[i].tokens;
    GCMOE_ASSIGN_OR_RETURN(double const per_layer, time_gc_layer(planned, weights, rig.x.data(),
                                                                 rig.out.data(), tokens, timing));
    nlohmann::json& point = *points[i];
    point["planned_comm_sms"] = planned.comm_sms(tokens);
    point["planned_overlap_down"] = plan.step(tokens).overlap_down;
    point["planned_down_by_rows"] = plan.step(tokens).down_by_rows;
    point["planned_us"] = per_layer;
    double const seq = baselines[i].us;
    point["planned_speedup_over_sequential"] = seq / per_layer;
    // The same comparison with both timed in turn (the ratio above compares timings taken at
    // different moments of the run), against the baseline's faster placement.
    clock.start();
    StatusOr<PairedSummary> const timed =
        time_back_to_back(planned, *rig.layers.front(), weights, rig.x.data(), rig.out.data(),
                          tokens, baselines[i].placement, timing, stream);
    ClockStats const clocks = clock.stop();
    GCMOE_ASSIGN_OR_RETURN(PairedSummary const b2b, timed);
    // The SM clock over the rounds (the 700 W cap lowers it for the MXFP4 kernels:
    // bench/common/gpu_clock_sampler.h).
    point["back_to_back"] = {{"rounds", timing.rounds},
                             {"order", "sequential first in even rounds, planned first in odd"},
                             {"planned_us", b2b.candidate_us},
                             {"sequential_us", b2b.baseline_us},
                             {"planned_speedup", b2b.speedup},
                             {"speedup_min", b2b.speedup_min},
                             {"speedup_max", b2b.speedup_max},
                             {"rounds_planned_faster", b2b.rounds_won},
                             {"round_speedups", b2b.speedups},
                             {"clock", clock_json(clocks)}};
    fmt::print(
        "{} {:>4} planned comm {:>3} SMs{} {:>9.1f} us  {:>5.2f}x sequential; back to back "
        "{:>9.1f} vs {:>9.1f} us: {:>5.3f}x ({:.3f}-{:.3f}, faster in {}/{}) at {:>4.0f} MHz\n",
        label, tokens, planned.comm_sms(tokens),
        plan.step(tokens).down_by_rows ? " L2 by rows" : "", per_layer, seq / per_layer,
        b2b.candidate_us, b2b.baseline_us, b2b.speedup, b2b.speedup_min, b2b.speedup_max,
        b2b.rounds_won, timing.rounds, clocks.sm_mhz_mean);
  }
  return plan;
}

}  // namespace gcmoe::bench
