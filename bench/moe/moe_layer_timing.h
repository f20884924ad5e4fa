#pragma once
// Timing one MoE layer for bench_moe_layer: a GC-MoE layer's replays, the sequential baseline's
// graph, and the two in alternating pairs (bench/common/paired_rounds.h). Times are µs per layer,
// each the median over `reps` timings of `layers` back-to-back replays.

#include <cuda_runtime.h>

#include <cstddef>

#include "bench/common/paired_rounds.h"
#include "engine/backends/cuda/graph.h"
#include "engine/common/status.h"
#include "kernels/moe/gc_moe_layer.h"

namespace gcmoe::bench {

struct LayerTiming {
  int reps = 20;   // timings per measurement (median)
  int layers = 4;  // back-to-back replays per timing
  int rounds = 9;  // pairs per paired comparison (odd: the median ratio is one round's)
};

// Experts the layer's own routing touched for `tokens` tokens (after a sequential run).
StatusOr<std::size_t> touched_experts(kernels::MoeLayerSequential& steps, int tokens, int top_k,
                                      cudaStream_t stream);

// One GC-MoE layer at `tokens`: prepared, replayed once (which moves it to the bucket's stream,
// where the timing records its events), then timed; a timed-out wait fails the benchmark.
StatusOr<double> time_gc_layer(kernels::GcMoeLayer& layer,
                               kernels::MoeLayerDeviceWeights const& weights, float const* x,
                               float* out, int tokens, LayerTiming const& timing);

// The sequential baseline's graph.
StatusOr<double> time_sequential(cuda::Graph const& sequential, LayerTiming const& timing,
                                 cudaStream_t stream);

// `planned` against `baseline`'s sequential graph (the shared expert placed as `placement`), in
// timing.rounds pairs, the order alternating.
StatusOr<PairedSummary> time_back_to_back(kernels::GcMoeLayer& planned,
                                          kernels::GcMoeLayer& baseline,
                                          kernels::MoeLayerDeviceWeights const& weights,
                                          float const* x, float* out, int tokens,
                                          kernels::SharedExpertLaunch placement,
                                          LayerTiming const& timing, cudaStream_t stream);

// Two GC-MoE layers in timing.rounds pairs, the order alternating.
StatusOr<PairedSummary> time_gc_pairs(kernels::GcMoeLayer& candidate, kernels::GcMoeLayer& baseline,
                                      kernels::MoeLayerDeviceWeights const& weights, float const* x,
                                      float* out, int tokens, LayerTiming const& timing);

}  // namespace gcmoe::bench
