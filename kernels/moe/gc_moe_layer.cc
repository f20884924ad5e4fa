#include "kernels/moe/gc_moe_layer.h"

#include <array>

#include "engine/common/check.h"
#include "kernels/moe/moe_local_dispatch.h"
#include "kernels/moe/wait_sites.h"

namespace gcmoe::kernels {

StatusOr<GcMoeLayer> GcMoeLayer::create(MoeLayerConfig const& config, int max_tokens, int device,
                                        GcMoeOptions const& options) {
  GcMoeLayer layer;
  layer.options_ = options;
  GCMOE_CHECK_ARG(options.plan.has_value() || options.comm_sms >= 1, "comm partition of {} SMs",
                  options.comm_sms);
  GCMOE_CHECK_CUDA(cudaSetDevice(device));
  // Every kernel is loaded before the partitions run concurrently: a kernel loaded lazily while
  // the GEMM spins on the dispatch's flags can deadlock (docs/gpu-machine.md).
  GCMOE_RETURN_IF_ERROR(preload_local_dispatch());
  GCMOE_ASSIGN_OR_RETURN(auto steps, MoeLayerSequential::create(config, max_tokens));
  layer.steps_.emplace(std::move(steps));
  GCMOE_ASSIGN_OR_RETURN(
      auto partitions,
      GcPartitionSet::create(device,
                             options.plan.value_or(GcPartitionPlan::uniform(options.comm_sms))));
  layer.partitions_.emplace(std::move(partitions));
  int const max_rows = layer.steps_->ready_flags();
  GCMOE_ASSIGN_OR_RETURN(layer.ready_rows_,
                         cuda::DeviceBuffer<int>::allocate(static_cast<std::size_t>(max_rows)));
  GCMOE_RETURN_IF_ERROR(layer.ready_rows_.fill_bytes(0));
  GCMOE_ASSIGN_OR_RETURN(layer.rows_done_,
                         cuda::DeviceBuffer<int>::allocate(static_cast<std::size_t>(max_rows)));
  GCMOE_RETURN_IF_ERROR(layer.rows_done_.fill_bytes(0));
  GCMOE_ASSIGN_OR_RETURN(layer.layout_ready_, cuda::DeviceBuffer<int>::allocate(1));
  GCMOE_RETURN_IF_ERROR(layer.layout_ready_.fill_bytes(0));
  GCMOE_ASSIGN_OR_RETURN(layer.epoch_, cuda::DeviceBuffer<int>::allocate(1));
  std::array<int, 1> const first_epoch{1};
  GCMOE_RETURN_IF_ERROR(layer.epoch_.copy_from_host(first_epoch));
  GCMOE_ASSIGN_OR_RETURN(layer.error_, cuda::DeviceBuffer<unsigned>::allocate(1));
  GCMOE_RETURN_IF_ERROR(layer.error_.fill_bytes(0));
  GCMOE_ASSIGN_OR_RETURN(layer.whole_side_, cuda::Stream::create());
  for (cuda::Event* event : {&layer.start_, &layer.comm_done_, &layer.side_done_}) {
    GCMOE_ASSIGN_OR_RETURN(*event, cuda::Event::create());
  }
  return layer;
}

Status GcMoeLayer::prepare(MoeLayerDeviceWeights const& weights, float const* x, float* out,
                           int num_tokens) {
  GCMOE_CHECK_ARG(num_tokens >= 1 && num_tokens <= steps_->max_tokens(),
                  "bucket of {} tokens, 1 to {}", num_tokens, steps_->max_tokens());
  GCMOE_CHECK_ARG(x != nullptr && out != nullptr, "null layer input or output");
  if (auto const it = graphs_.find(num_tokens); it != graphs_.end()) {
    Bucket const& b = it->second;
    if (b.x == x && b.out == out && b.weights == weights) {
      return Status();
    }
    graphs_.erase(it);
  }
  cuda::SmPartition const* const partition = partitions_->partition_of(num_tokens);
  if (partition == nullptr) {
    // No partition for this bucket: the whole device, the GC-MoE body or the sequential graph as
    // the plan says; in the sequential graph the shared expert placed as the plan says (in
    // launches of its own when it is packed apart from the routed experts: MXFP4 routed, FP8
    // shared).
    cudaStream_t const whole = partitions_->whole_device();
    GcPartitionStep const& step = plan().step(num_tokens);
    bool const apart = step.shared_separate || weights.shared_expert != nullptr;
    if (step.overlapped) {
      GCMOE_ASSIGN_OR_RETURN(
          cuda::Graph graph,
          capture_overlapped(weights, x, out, num_tokens, whole, whole_side_.get(), nullptr));
      graphs_.emplace(num_tokens, Bucket{weights, x, out, whole, std::move(graph)});
      return Status();
    }
    GCMOE_ASSIGN_OR_RETURN(
        cuda::Graph graph,
        sequential_graph(weights, x, out, num_tokens, whole,
                         apart ? SharedExpertLaunch::kSeparate : SharedExpertLaunch::kWithRouted));
    graphs_.emplace(num_tokens, Bucket{weights, x, out, whole, std::move(graph)});
    return Status();
  }
  auto const side = reinterpret_cast<cudaStream_t>(partition->compute().side_stream());
  auto const comm = options_.dispatch_on_comm
                        ? reinterpret_cast<cudaStream_t>(partition->comm().stream())
                        : nullptr;
  auto const compute_stream = reinterpret_cast<cudaStream_t>(partition->compute().stream());
  GCMOE_ASSIGN_OR_RETURN(cuda::Graph graph, capture_overlapped(weights, x, out, num_tokens,
                                                               compute_stream, side, comm));
  graphs_.emplace(num_tokens, Bucket{weights, x, out, compute_stream, std::move(graph)});
  return Status();
}

StatusOr<cuda::Graph> GcMoeLayer::capture_overlapped(MoeLayerDeviceWeights const& weights,
                                                     float const* x, float* out, int num_tokens,
                                                     cudaStream_t compute_stream, cudaStream_t side,
                                                     cudaStream_t comm) {
  // Flags only where a dispatch runs on a stream of its own (the comm partition's): in the body
  // on one or two streams each step follows what it reads in its stream, and an acquire per GEMM
  // CTA and per dispatch block would only add latency (bench/NOTES.md).
  bool const flags = comm != nullptr;
  GcPartitionStep const& step = plan().step(num_tokens);
  bool const overlap_down = options_.overlap_down && step.overlap_down;
  MoeLayerSync const sync{
      .ready_rows = flags ? ready_rows_.data() : nullptr,
      .epoch = flags ? epoch_.data() : nullptr,
      .layout_ready = flags ? layout_ready_.data() : nullptr,
      .error = error_.data(),
      .overlap_down = overlap_down,
      .rows_done = overlap_down && step.down_by_rows ? rows_done_.data() : nullptr,
      .combine_clears_rows = true,
      .chain = options_.chain,
      .compute_sms = compute_sms(num_tokens),
      .wait_timeout_ns = options_.wait_timeout_ns};
  MoeLayerSequential& steps = *steps_;
  bool const shared = weights.has_shared;
  constexpr SharedExpertLaunch kSeparate = SharedExpertLaunch::kSeparate;
  auto const fork = [](cuda::Event const& event, cudaStream_t from, cudaStream_t to) {
    return cuda::order_after(event.get(), from, to);
  };
  auto const body = [&](cudaStream_t compute) -> Status {
    // Roots: the shared expert needs no routing, so its dispatch and GEMM (compute, side stream)
    // start with the router.
    cudaStream_t const shared_dispatch = comm != nullptr ? comm : side;
    if (comm != nullptr) {
      GCMOE_RETURN_IF_ERROR(fork(start_, compute, comm));
    }
    GCMOE_RETURN_IF_ERROR(fork(start_, compute, side));
    if (shared) {
      GCMOE_RETURN_IF_ERROR(
          steps.dispatch_shared(x, num_tokens, shared_dispatch, kSeparate, &sync));
      // Beside the routed path: no K split (its CTAs would take the routed kernels' SMs).
      GCMOE_RETURN_IF_ERROR(steps.experts_shared(weights, num_tokens, side, &sync, false));
    }
    if (comm != nullptr) {
      // A root too: it acquires the routing the active-list kernel publishes, so no graph edge
      // crosses from the compute partition to the comm partition.
      GCMOE_RETURN_IF_ERROR(steps.dispatch_routed(x, num_tokens, comm, &sync));
    }
    GCMOE_RETURN_IF_ERROR(steps.route_and_sort(weights, x, num_tokens, compute, kSeparate, &sync));
    if (comm == nullptr) {
      GCMOE_RETURN_IF_ERROR(steps.dispatch_routed(x, num_tokens, compute, &sync));
    }
    GCMOE_RETURN_IF_ERROR(steps.experts_routed(weights, num_tokens, compute, kSeparate, &sync));
    GCMOE_RETURN_IF_ERROR(fork(side_done_, side, compute));
    GCMOE_RETURN_IF_ERROR(steps.combine(weights, num_tokens, out, compute, kSeparate, &sync));
    // The comm partition joins after the combine, off the critical path: L1 acquired every row
    // the dispatch stored (and the combine's pair_row, stored before each row's flag), so the
    // combine needs no edge from it; the join only closes the capture.
    if (comm != nullptr) {
      GCMOE_RETURN_IF_ERROR(fork(comm_done_, comm, compute));
    }
    return Status();
  };
  return cuda::Graph::capture(compute_stream, body);
}

Status GcMoeLayer::replay(int num_tokens) {
  auto const it = graphs_.find(num_tokens);
  GCMOE_CHECK_ARG(it != graphs_.end(), "no graph prepared for {} tokens", num_tokens);
  return partitions_->launch_ordered(it->second.graph, it->second.stream);
}

Status GcMoeLayer::synchronize() {
  GCMOE_CHECK_CUDA(cudaStreamSynchronize(partitions_->last_stream()));
  std::array<unsigned, 1> error{};
  GCMOE_RETURN_IF_ERROR(error_.copy_to_host(error));
  if (error[0] != 0) {
    GCMOE_RETURN_IF_ERROR(error_.fill_bytes(0));
    return Status(StatusCode::kDeadlineExceeded,
                  "GC-MoE: a wait passed its deadline (" + wait_sites_to_string(error[0]) + ")");
  }
  return Status();
}

StatusOr<cuda::Graph> GcMoeLayer::sequential_graph(MoeLayerDeviceWeights const& weights,
                                                   float const* x, float* out, int num_tokens,
                                                   cudaStream_t stream, SharedExpertLaunch shared) {
  MoeLayerSequential& steps = *steps_;
  return cuda::Graph::capture(
      stream, [&](cudaStream_t s) { return steps.run(weights, x, num_tokens, out, s, shared); });
}

StatusOr<int> GcMoeLayer::kernel_nodes(int num_tokens) const {
  auto const it = graphs_.find(num_tokens);
  GCMOE_CHECK_ARG(it != graphs_.end(), "no graph prepared for {} tokens", num_tokens);
  return it->second.graph.kernel_nodes();
}

}  // namespace gcmoe::kernels
