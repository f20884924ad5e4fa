#include "kernels/moe/ep_moe_rank.h"

#include <algorithm>
#include <array>
#include <string>

#include "engine/backends/cuda/stream.h"
#include "engine/common/check.h"
#include "kernels/moe/expert_ffn_launch.h"
#include "kernels/moe/expert_rows_clear.h"
#include "kernels/moe/expert_rows_hint.h"
#include "kernels/moe/fp8_expert_wgmma.h"
#include "kernels/moe/moe_local_dispatch.h"
#include "kernels/moe/mxfp4_expert_wgmma.h"
#include "kernels/moe/wait_sites.h"

namespace gcmoe::kernels {
namespace {

template <typename T>
Status allocate_zeroed(cuda::DeviceBuffer<T>& buffer, std::int64_t count) {
  GCMOE_ASSIGN_OR_RETURN(buffer, cuda::DeviceBuffer<T>::allocate(
                                     static_cast<std::size_t>(std::max<std::int64_t>(count, 1))));
  return buffer.fill_bytes(0);
}

}  // namespace

std::size_t EpMoeRank::symmetric_bytes(MoeLayerConfig const& config, int max_tokens, int ranks) {
  return ep_symmetric_layout(config, max_tokens, ranks).bytes;
}

StatusOr<EpMoeRank> EpMoeRank::create(MoeLayerConfig const& config, int max_tokens, int ranks,
                                      int rank, cuda::SymmetricMemory memory) {
  GCMOE_CHECK_ARG(ranks >= 1 && ranks <= kMaxEpRanks, "{} ranks: 1 to {}", ranks, kMaxEpRanks);
  GCMOE_CHECK_ARG(rank >= 0 && rank < ranks, "rank {} of {}", rank, ranks);
  GCMOE_CHECK_ARG(config.num_experts % ranks == 0, "{} experts do not split over {} ranks",
                  config.num_experts, ranks);
  GCMOE_CHECK_ARG(config.hidden % 128 == 0 && config.intermediate % 128 == 0,
                  "H {} and I {} must be multiples of 128", config.hidden, config.intermediate);
  EpSymmetricLayout const layout = ep_symmetric_layout(config, max_tokens, ranks);
  GCMOE_CHECK_ARG(memory.ranks() == ranks && memory.rank() == rank,
                  "a {} symmetric region of rank {} of {} for rank {} of {}",
                  cuda::to_string(memory.kind()), memory.rank(), memory.ranks(), rank, ranks);
  GCMOE_CHECK_ARG(memory.bytes() >= layout.bytes,
                  "a symmetric region of {} bytes; this layer needs {}", memory.bytes(),
                  layout.bytes);
  GCMOE_RETURN_IF_ERROR(preload_ep_dispatch());
  GCMOE_RETURN_IF_ERROR(preload_local_dispatch());
  GCMOE_RETURN_IF_ERROR(preload_fp8_expert_wgmma());
  GCMOE_RETURN_IF_ERROR(preload_mxfp4_expert_wgmma());
  GCMOE_RETURN_IF_ERROR(preload_clear_rows_done());
  EpMoeRank r;
  r.config_ = config;
  r.ranks_ = ranks;
  r.rank_ = rank;
  r.max_tokens_ = max_tokens;
  GCMOE_ASSIGN_OR_RETURN(auto local, MoeLayerSequential::create(config, max_tokens));
  r.local_.emplace(std::move(local));
  std::int64_t const local_experts = config.num_experts / ranks;
  std::int64_t const capacity = layout.capacity;
  r.capacity_ = static_cast<int>(capacity);
  r.peers_.ranks = ranks;
  for (int peer = 0; peer < ranks; ++peer) {
    std::byte* const base = memory.peer(peer);
    GCMOE_CHECK_ARG(base != nullptr, "rank {}: peer {}'s region is not mapped", rank, peer);
    auto const at = [base](std::size_t offset) { return base + offset; };
    EpRankBuffers& b = r.peers_.rank[peer];
    for (int p = 0; p < 2; ++p) {
      b.recv_xq[p] = reinterpret_cast<std::uint8_t*>(at(layout.recv_xq[p]));
      b.recv_scales[p] = reinterpret_cast<float*>(at(layout.recv_scales[p]));
      b.recv_weights[p] = reinterpret_cast<float*>(at(layout.recv_weights[p]));
      b.row_flags[p] = reinterpret_cast<int*>(at(layout.row_flags[p]));
      b.counts[p] = reinterpret_cast<int*>(at(layout.counts[p]));
      b.count_flags[p] = reinterpret_cast<int*>(at(layout.count_flags[p]));
    }
    b.done_flags = reinterpret_cast<int*>(at(layout.done_flags));
    b.barrier_flags = reinterpret_cast<int*>(at(layout.barrier_flags));
    b.y = reinterpret_cast<std::uint16_t*>(at(layout.y));
  }
  r.system_scope_ = memory.cross_device();
  r.memory_ = std::move(memory);
  std::int64_t const inter = config.intermediate;
  GCMOE_RETURN_IF_ERROR(allocate_zeroed(r.send_base_, config.num_experts));
  // One more segment and active entry for the shared expert in the routed launch.
  GCMOE_RETURN_IF_ERROR(allocate_zeroed(r.recv_offsets_, local_experts + 2));
  GCMOE_RETURN_IF_ERROR(allocate_zeroed(r.active_, local_experts + 1));
  GCMOE_RETURN_IF_ERROR(allocate_zeroed(r.num_active_, 1));
  GCMOE_RETURN_IF_ERROR(allocate_zeroed(r.layout_ready_, 1));
  GCMOE_RETURN_IF_ERROR(allocate_zeroed(r.pair_rank_, std::int64_t{max_tokens} * config.top_k));
  GCMOE_RETURN_IF_ERROR(allocate_zeroed(r.pair_row_, std::int64_t{max_tokens} * config.top_k));
  GCMOE_RETURN_IF_ERROR(allocate_zeroed(r.h_, capacity * inter));
  GCMOE_RETURN_IF_ERROR(allocate_zeroed(r.h_scales_, capacity * (inter / 128)));
  GCMOE_RETURN_IF_ERROR(allocate_zeroed(r.rows_done_, capacity));
  GCMOE_RETURN_IF_ERROR(allocate_zeroed(r.error_, 1));
  GCMOE_RETURN_IF_ERROR(allocate_zeroed(r.first_timeout_, 1));
  GCMOE_ASSIGN_OR_RETURN(r.epoch_, cuda::DeviceBuffer<int>::allocate(1));
  std::array<int, 1> const first{1};
  GCMOE_RETURN_IF_ERROR(r.epoch_.copy_from_host(first));
  return r;
}

EpStep EpMoeRank::step() const {
  return {.peers = peers_,
          .rank = rank_,
          .parity = parity_,
          .num_experts = config_.num_experts,
          .hidden = config_.hidden,
          .epoch = epoch_.data(),
          .error = error_.data(),
          .first_timeout = first_timeout_.data(),
          .timeout_ns = timeout_ns_,
          .system_scope = system_scope_};
}

MoeLayerSync EpMoeRank::sync() const {
  return {.epoch = epoch_.data(),
          .layout_ready = layout_ready_.data(),
          .error = error_.data(),
          .overlap_down = overlap_down_,
          .chain = true,
          .compute_sms = compute_sms_,
          .wait_timeout_ns = timeout_ns_,
          .system_scope = system_scope_};
}

Status EpMoeRank::route(MoeLayerDeviceWeights const& weights, float const* x, int num_tokens,
                        cudaStream_t stream) {
  MoeLayerSync const s = sync();
  return local_->route_and_sort(weights, x, num_tokens, stream, SharedExpertLaunch::kSeparate, &s);
}

Status EpMoeRank::publish_counts(int num_tokens, cudaStream_t stream) {
  // A rank with no tokens routed nothing (and published no layout): it sends zero counts.
  bool const idle = num_tokens == 0;
  return ep_publish_counts(step(), idle ? nullptr : local_->expert_offsets(),
                           idle ? nullptr : layout_ready_.data(), stream);
}

Status EpMoeRank::dispatch(float const* x, int num_tokens, cudaStream_t stream) {
  EpStep const s = step();
  GCMOE_RETURN_IF_ERROR(ep_plan(s, {.send_base = send_base_.data()}, stream));
  return ep_dispatch_rows(s,
                          {.x = x,
                           .sorted_ids = local_->sorted_ids(),
                           .topk_ids = local_->topk_ids(),
                           .topk_weights = local_->topk_weights(),
                           .expert_offsets = local_->expert_offsets(),
                           .send_base = send_base_.data(),
                           .num_tokens = num_tokens,
                           .top_k = config_.top_k,
                           .recipe = requant_of(config_.expert.activation_recipe),
                           .pair_rank = pair_rank_.data(),
                           .pair_row = pair_row_.data()},
                          stream);
}

Status EpMoeRank::plan_receive(MoeLayerDeviceWeights const& weights, float const* x, int num_tokens,
                               cudaStream_t stream) {
  bool const fused = fused_shared(weights);
  EpStep const s = step();
  GCMOE_RETURN_IF_ERROR(ep_plan(s,
                                {.recv_offsets = recv_offsets_.data(),
                                 .active = active_.data(),
                                 .num_active = num_active_.data(),
                                 .shared_rows = fused ? num_tokens : -1},
                                stream));
  if (!fused) {
    return Status();
  }
  return ep_dispatch_shared_rows(s, x, num_tokens, requant_of(config_.expert.activation_recipe),
                                 recv_offsets_.data(), stream);
}

Status EpMoeRank::experts(MoeLayerDeviceWeights const& weights, cudaStream_t stream,
                          bool combine_clears_rows) {
  int const local_experts = config_.num_experts / ranks_;
  MoeLayerSync s = sync();
  s.combine_clears_rows = combine_clears_rows;
  Fp8ExpertGemmArgs select;
  select.expert_offsets = recv_offsets_.data();
  select.active_experts = active_.data();
  select.num_active = num_active_.data();
  select.max_active = std::min(local_experts, capacity_) + (fused_shared(weights) ? 1 : 0);
  // Every rank's tokens spread over all E experts; this rank holds E/R of them.
  select.rows_per_expert_hint =
      routed_rows_hint(ranks_ * max_tokens_, config_.top_k, config_.num_experts);
  EpRankBuffers const& own = peers_.rank[rank_];
  ExpertFfnRows const rows{
      .x = own.recv_xq[parity_],
      .x_scales = own.recv_scales[parity_],
      .route_weights = config_.expert.weight_before_down ? own.recv_weights[parity_] : nullptr,
      .h = h_.data(),
      .h_scales = h_scales_.data(),
      .y = own.y,
      .ready_rows = own.row_flags[parity_],
      // Every received row (the shared expert's segment too, when fused) is within capacity.
      .rows_done = by_rows() ? rows_done_.data() : nullptr,
      .rows_used = capacity_,
      .capacity = capacity_};
  GCMOE_RETURN_IF_ERROR(
      launch_expert_ffn(config_, routed_experts(weights), rows, select, &s, stream));
  return ep_signal_done(step(), stream);
}

Status EpMoeRank::shared_expert(MoeLayerDeviceWeights const& weights, float const* x,
                                int num_tokens, cudaStream_t stream, bool alone) {
  if (!weights.has_shared || fused_shared(weights)) {
    return Status();  // none, or in the routed launch (plan_receive dispatched its rows)
  }
  GCMOE_RETURN_IF_ERROR(
      local_->dispatch_shared(x, num_tokens, stream, SharedExpertLaunch::kSeparate));
  return local_->experts_shared(weights, num_tokens, stream, nullptr, alone);
}

Status EpMoeRank::combine(MoeLayerDeviceWeights const& weights, int num_tokens, float* out,
                          cudaStream_t stream) {
  GCMOE_RETURN_IF_ERROR(ep_combine(
      step(),
      {.pair_rank = pair_rank_.data(),
       .pair_row = pair_row_.data(),
       .topk_weights = local_->topk_weights(),
       .apply_weights = !config_.expert.weight_before_down,
       .shared_y = weights.has_shared && !fused_shared(weights) ? local_->shared_output() : nullptr,
       .shared_first_row =
           fused_shared(weights) ? recv_offsets_.data() + config_.num_experts / ranks_ : nullptr,
       .num_tokens = num_tokens,
       .top_k = config_.top_k,
       .out = out,
       .clear = by_rows() ? rows_done_.data() : nullptr,
       .clear_rows = by_rows() ? capacity_ : 0},
      stream));
  if (handoff_ == EpStepHandoff::kCleanAndBarrier) {
    GCMOE_RETURN_IF_ERROR(ep_clean_and_barrier(step(), capacity_, stream));
  }
  return ep_advance_epoch(epoch_.data(), stream);
}

Status EpMoeRank::enqueue_step(MoeLayerDeviceWeights const& weights, float const* x, int num_tokens,
                               float* out, Streams const& s) {
  GCMOE_RETURN_IF_ERROR(check_shared_launch(weights, shared_launch_));
  begin_step();
  auto const fork = cuda::order_after;
  GCMOE_RETURN_IF_ERROR(fork(s.fork, s.compute, s.comm));
  GCMOE_RETURN_IF_ERROR(fork(s.fork, s.compute, s.side));
  // Roots of the step: the shared expert (no routing) and the comm kernels, which acquire the
  // routing the compute partition publishes (no graph edge between the partitions).
  if (s.side != s.compute) {
    GCMOE_RETURN_IF_ERROR(shared_expert(weights, x, num_tokens, s.side, false));
  }
  if (s.comm != s.compute) {
    GCMOE_RETURN_IF_ERROR(publish_counts(num_tokens, s.comm));
    GCMOE_RETURN_IF_ERROR(dispatch(x, num_tokens, s.comm));
  }
  GCMOE_RETURN_IF_ERROR(route(weights, x, num_tokens, s.compute));
  if (s.comm == s.compute) {
    GCMOE_RETURN_IF_ERROR(publish_counts(num_tokens, s.compute));
    GCMOE_RETURN_IF_ERROR(dispatch(x, num_tokens, s.compute));
  }
  GCMOE_RETURN_IF_ERROR(plan_receive(weights, x, num_tokens, s.compute));
  // A rank without tokens of its own runs no combine kernel: its L2 keeps the clear after it.
  GCMOE_RETURN_IF_ERROR(experts(weights, s.compute, /*combine_clears_rows=*/num_tokens > 0));
  if (s.side == s.compute) {
    GCMOE_RETURN_IF_ERROR(shared_expert(weights, x, num_tokens, s.compute));
  }
  GCMOE_RETURN_IF_ERROR(fork(s.side_done, s.side, s.compute));
  GCMOE_RETURN_IF_ERROR(combine(weights, num_tokens, out, s.compute));
  // The comm stream rejoins after the combine, off the critical path.
  return fork(s.comm_done, s.comm, s.compute);
}

Status EpMoeRank::error() {
  GCMOE_CHECK_CUDA(cudaDeviceSynchronize());
  std::array<unsigned, 1> flag{};
  GCMOE_RETURN_IF_ERROR(error_.copy_to_host(flag));
  if (flag[0] == 0) {
    return Status();
  }
  std::array<EpWaitDetail, 1> first{};
  std::array<int, 1> epoch{};
  GCMOE_RETURN_IF_ERROR(first_timeout_.copy_to_host(first));
  GCMOE_RETURN_IF_ERROR(epoch_.copy_to_host(epoch));
  GCMOE_RETURN_IF_ERROR(error_.fill_bytes(0));
  GCMOE_RETURN_IF_ERROR(first_timeout_.fill_bytes(0));
  std::string message = "expert-parallel rank " + std::to_string(rank_) +
                        ": a wait for a peer passed its deadline (" +
                        wait_sites_to_string(flag[0]) + ")";
  EpWaitDetail const& d = first[0];
  if (d.site != 0) {
    std::string const whose =
        d.peer < 0 ? std::string("its own routing") : "rank " + std::to_string(d.peer);
    message += "; first: " + wait_sites_to_string(static_cast<unsigned>(d.site)) + " of " + whose +
               " at parity " + std::to_string(d.parity) + ", waited for epoch " +
               std::to_string(d.target) + ", the flag held " + std::to_string(d.seen);
  }
  message += "; epoch now " + std::to_string(epoch[0]);
  return Status(StatusCode::kDeadlineExceeded, message);
}

}  // namespace gcmoe::kernels
