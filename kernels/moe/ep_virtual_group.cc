#include "kernels/moe/ep_virtual_group.h"

#include "engine/common/check.h"

namespace gcmoe::kernels {

StatusOr<EpVirtualGroup> EpVirtualGroup::create(MoeLayerConfig const& config, int max_tokens,
                                                std::span<MoeLayerDeviceWeights const> weights,
                                                int device, int comm_sms) {
  int const ranks = static_cast<int>(weights.size());
  GCMOE_CHECK_ARG(ranks >= 1 && ranks <= kMaxEpRanks, "{} ranks: 1 to {}", ranks, kMaxEpRanks);
  GCMOE_CHECK_CUDA(cudaSetDevice(device));
  EpVirtualGroup group;
  // Every rank's region on this GPU, each knowing all of them (plain pointers).
  std::vector<int> const devices(static_cast<std::size_t>(ranks), device);
  GCMOE_ASSIGN_OR_RETURN(auto memories,
                         cuda::SymmetricMemory::allocate_local_group(
                             EpMoeRank::symmetric_bytes(config, max_tokens, ranks), devices));
  for (int r = 0; r < ranks; ++r) {
    GCMOE_ASSIGN_OR_RETURN(auto rank,
                           EpMoeRank::create(config, max_tokens, ranks, r,
                                             std::move(memories[static_cast<std::size_t>(r)])));
    group.ranks_.push_back(std::move(rank));
  }
  group.weights_.assign(weights.begin(), weights.end());
  GCMOE_ASSIGN_OR_RETURN(group.partition_, cuda::SmPartition::create(device, comm_sms));
  GCMOE_ASSIGN_OR_RETURN(group.fork_, cuda::Event::create());
  GCMOE_ASSIGN_OR_RETURN(group.join_, cuda::Event::create());
  return group;
}

cudaStream_t EpVirtualGroup::stream() const {
  return reinterpret_cast<cudaStream_t>(partition_.compute().stream());
}

Status EpVirtualGroup::step(std::span<float const* const> x, std::span<int const> tokens,
                            std::span<float* const> out) {
  std::size_t const n = ranks_.size();
  GCMOE_CHECK_ARG(x.size() == n && tokens.size() == n && out.size() == n,
                  "one input, token count and output per rank ({})", n);
  cudaStream_t const compute = stream();
  auto const comm = reinterpret_cast<cudaStream_t>(partition_.comm().stream());
  // The comm stream joins the compute stream's order at the start and rejoins at the end, so a
  // step (or its capture) is one unit on the compute stream.
  GCMOE_RETURN_IF_ERROR(cuda::order_after(fork_.get(), compute, comm));
  for (auto& rank : ranks_) {
    rank.begin_step();
  }
  for (std::size_t r = 0; r < n; ++r) {
    GCMOE_RETURN_IF_ERROR(ranks_[r].route(weights_[r], x[r], tokens[r], compute));
  }
  for (std::size_t r = 0; r < n; ++r) {
    GCMOE_RETURN_IF_ERROR(ranks_[r].publish_counts(tokens[r], comm));
  }
  for (std::size_t r = 0; r < n; ++r) {
    GCMOE_RETURN_IF_ERROR(ranks_[r].dispatch(x[r], tokens[r], comm));
  }
  for (std::size_t r = 0; r < n; ++r) {
    GCMOE_RETURN_IF_ERROR(ranks_[r].plan_receive(weights_[r], x[r], tokens[r], compute));
    // Each rank's combine (when it has tokens, so that it runs) zeroes its L2-by-rows counters.
    GCMOE_RETURN_IF_ERROR(ranks_[r].experts(weights_[r], compute, tokens[r] > 0));
  }
  for (std::size_t r = 0; r < n; ++r) {
    GCMOE_RETURN_IF_ERROR(ranks_[r].shared_expert(weights_[r], x[r], tokens[r], compute));
  }
  for (std::size_t r = 0; r < n; ++r) {
    GCMOE_RETURN_IF_ERROR(ranks_[r].combine(weights_[r], tokens[r], out[r], compute));
  }
  return cuda::order_after(join_.get(), comm, compute);
}

Status EpVirtualGroup::capture(std::span<float const* const> x, std::span<int const> tokens,
                               std::span<float* const> out) {
  // Each capture advances the ranks' host parity once, so the two graphs hold both parities;
  // the device epoch advances once per replay, whichever graph it is.
  for (auto& graph : graphs_) {
    GCMOE_ASSIGN_OR_RETURN(
        graph, cuda::Graph::capture(stream(), [&](cudaStream_t) { return step(x, tokens, out); }));
  }
  next_graph_ = 0;
  return Status();
}

Status EpVirtualGroup::replay() {
  GCMOE_RETURN_IF_ERROR(graphs_[next_graph_].launch(stream()));
  next_graph_ ^= 1;
  return Status();
}

Status EpVirtualGroup::synchronize() {
  GCMOE_CHECK_CUDA(cudaStreamSynchronize(stream()));
  for (auto& rank : ranks_) {
    GCMOE_RETURN_IF_ERROR(rank.error());
  }
  return Status();
}

}  // namespace gcmoe::kernels
