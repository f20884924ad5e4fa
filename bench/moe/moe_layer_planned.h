#pragma once
// The per-bucket plan bench_moe_layer's sweep picks, and that plan's layer timed at every point.
// Two steps after the sweep (moe_layer_point.h): L2 by PDL is timed against L2 plainly and
// against L2 acquiring L1's rows (down_by_rows) in the first plan's GC-MoE graphs, in pairs; PDL
// is turned off in the buckets where it lost every pair to plainly, L2 by rows turned on where it
// won every pair; then the plan chosen again is timed at every point alone and in pairs with the
// sequential graph ("back_to_back", with the SM clock over the rounds).

#include <cuda_runtime.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "bench/common/gpu_clock_sampler.h"
#include "bench/moe/moe_layer_point.h"
#include "bench/moe/moe_layer_rig.h"
#include "engine/common/status.h"
#include "kernels/moe/gc_partition_plan.h"

namespace gcmoe::bench {

// `points[i]` is the sweep's JSON of `measured[i]` (and `baselines[i]` its baseline); both gain
// the PDL comparison and the planned layer's timings. Returns the plan.
StatusOr<kernels::GcPartitionPlan> plan_and_time(
    LayerRig& rig, bool with_shared_expert, std::vector<kernels::GcPartitionMeasurement>& measured,
    std::vector<SequentialBaseline> const& baselines, std::vector<nlohmann::json*> const& points,
    PointSettings const& settings, GpuClockSampler& clock, cudaStream_t stream);

}  // namespace gcmoe::bench
