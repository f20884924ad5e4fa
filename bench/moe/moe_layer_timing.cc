#include "bench/moe/moe_layer_timing.h"

#include <cstdint>
#include <set>
#include <vector>

#include "bench/common/gpu_timing.h"
#include "engine/common/cuda_check.h"

namespace gcmoe::bench {

StatusOr<std::size_t> touched_experts(kernels::MoeLayerSequential& steps, int tokens, int top_k,
                                      cudaStream_t stream) {
  std::vector<std::int32_t> ids(static_cast<std::size_t>(tokens) * top_k);
  GCMOE_CHECK_CUDA(cudaMemcpyAsync(ids.data(), steps.topk_ids(), ids.size() * sizeof(std::int32_t),
                                   cudaMemcpyDeviceToHost, stream));
  GCMOE_CHECK_CUDA(cudaStreamSynchronize(stream));
  return std::set<int>(ids.begin(), ids.end()).size();
}

StatusOr<double> time_gc_layer(kernels::GcMoeLayer& layer,
                               kernels::MoeLayerDeviceWeights const& weights, float const* x,
                               float* out, int tokens, LayerTiming const& timing) {
  GCMOE_RETURN_IF_ERROR(layer.prepare(weights, x, out, tokens));
  GCMOE_RETURN_IF_ERROR(layer.replay(tokens));
  GCMOE_RETURN_IF_ERROR(layer.synchronize());
  GCMOE_ASSIGN_OR_RETURN(double const us,
                         time_launches(layer.stream(), timing.reps, [&]() -> Status {
                           for (int l = 0; l < timing.layers; ++l) {
                             GCMOE_RETURN_IF_ERROR(layer.replay(tokens));
                           }
                           return Status();
                         }));
  GCMOE_RETURN_IF_ERROR(layer.synchronize());
  return us / timing.layers;
}

StatusOr<double> time_sequential(cuda::Graph const& sequential, LayerTiming const& timing,
                                 cudaStream_t stream) {
  GCMOE_ASSIGN_OR_RETURN(double const us, time_launches(stream, timing.reps, [&]() -> Status {
                           for (int l = 0; l < timing.layers; ++l) {
                             GCMOE_RETURN_IF_ERROR(sequential.launch(stream));
                           }
                           return Status();
                         }));
  return us / timing.layers;
}

StatusOr<PairedSummary> time_back_to_back(kernels::GcMoeLayer& planned,
                                          kernels::GcMoeLayer& baseline,
                                          kernels::MoeLayerDeviceWeights const& weights,
                                          float const* x, float* out, int tokens,
                                          kernels::SharedExpertLaunch placement,
                                          LayerTiming const& timing, cudaStream_t stream) {
  GCMOE_ASSIGN_OR_RETURN(cuda::Graph const sequential,
                         baseline.sequential_graph(weights, x, out, tokens, stream, placement));
  std::vector<double> planned_us;
  std::vector<double> sequential_us;
  for (int round = 0; round < timing.rounds; ++round) {
    double seq = 0.0;
    double gc = 0.0;
    if (baseline_first(round)) {
      GCMOE_ASSIGN_OR_RETURN(seq, time_sequential(sequential, timing, stream));
      GCMOE_ASSIGN_OR_RETURN(gc, time_gc_layer(planned, weights, x, out, tokens, timing));
    } else {
      GCMOE_ASSIGN_OR_RETURN(gc, time_gc_layer(planned, weights, x, out, tokens, timing));
      GCMOE_ASSIGN_OR_RETURN(seq, time_sequential(sequential, timing, stream));
    }
    sequential_us.push_back(seq);
    planned_us.push_back(gc);
  }
  return summarize_pairs(planned_us, sequential_us);
}

StatusOr<PairedSummary> time_gc_pairs(kernels::GcMoeLayer& candidate, kernels::GcMoeLayer& baseline,
                                      kernels::MoeLayerDeviceWeights const& weights, float const* x,
                                      float* out, int tokens, LayerTiming const& timing) {
  std::vector<double> candidate_us;
  std::vector<double> baseline_us;
  for (int round = 0; round < timing.rounds; ++round) {
    for (bool const candidate_turn : {!baseline_first(round), baseline_first(round)}) {
      kernels::GcMoeLayer& layer = candidate_turn ? candidate : baseline;
      GCMOE_ASSIGN_OR_RETURN(double const us,
                             time_gc_layer(layer, weights, x, out, tokens, timing));
      (candidate_turn ? candidate_us : baseline_us).push_back(us);
    }
  }
  return summarize_pairs(candidate_us, baseline_us);
}

}  // namespace gcmoe::bench
