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
  return time_pairs(timing.rounds, [&](bool planned_turn) {
    return planned_turn ? time_gc_layer(planned, weights, x, out, tokens, timing)
                        : time_sequential(sequential, timing, stream);
  });
}

StatusOr<PairedSummary> time_gc_pairs(kernels::GcMoeLayer& candidate, kernels::GcMoeLayer& baseline,
                                      kernels::MoeLayerDeviceWeights const& weights, float const* x,
                                      float* out, int tokens, LayerTiming const& timing) {
  return time_pairs(timing.rounds, [&](bool candidate_turn) {
    return time_gc_layer(candidate_turn ? candidate : baseline, weights, x, out, tokens, timing);
  });
}

}  // namespace gcmoe::bench
