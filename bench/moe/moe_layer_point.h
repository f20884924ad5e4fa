#pragma once
// One point of bench_moe_layer's sweep (a model, with or without its shared expert, T tokens):
// the sequential baseline at its faster placement of the shared expert, the overlapped body in
// pairs with it (L2 by PDL and plainly), every comm partition size of the sweep, and the fastest
// split confirmed in pairs — what GcPartitionPlan::choose needs, and the point's JSON.

#include <cuda_runtime.h>

#include <nlohmann/json.hpp>

#include "bench/moe/moe_layer_rig.h"
#include "bench/moe/moe_layer_timing.h"
#include "engine/common/status.h"
#include "kernels/moe/gc_partition_plan.h"

namespace gcmoe::bench {

// The row label of the printed tables.
inline char const* layer_row_label(bool with_shared_expert) {
  return with_shared_expert ? "shared " : "routed ";
}

struct PointSettings {
  LayerTiming timing;
  double ceiling_gbps = 0.0;  // MemoryCeilings::best of this run: the floor's rate
  // A split is confirmed in pairs (and may enter the plan) only when its single timing beats the
  // sequential layer by this.
  double min_gain = 1.02;
};

// The sequential layer at its faster placement of the shared expert (its own launches only when it
// is packed apart): what every paired comparison at the point runs against.
struct SequentialBaseline {
  double us = 0.0;
  kernels::SharedExpertLaunch placement = kernels::SharedExpertLaunch::kWithRouted;
};

struct MeasuredPoint {
  kernels::GcPartitionMeasurement measurement;
  SequentialBaseline baseline;
  nlohmann::json json;
};

// Prints the point's rows of the table as it goes.
StatusOr<MeasuredPoint> measure_point(LayerRig& rig, bool with_shared_expert, int tokens,
                                      PointSettings const& settings, cudaStream_t stream);

// The table header measure_point's rows line up under.
void print_point_header(LayerRig const& rig, bool with_shared_expert);

}  // namespace gcmoe::bench
