#pragma once
// One rank of an expert-parallel MoE layer through the GC-MoE protocol (issue 6): R ranks, each
// with its own tokens and E/R of the routed experts (rank r owns [r·E/R, (r+1)·E/R)) plus a
// replica of the shared expert. A step, every rank in lockstep on the same epoch:
//   route           router + align & sort over all E experts of the rank's own tokens
//   publish_counts  its per-expert pair counts into every rank's count matrix   (comm)
//   dispatch        the row layout (ep_plan) and its FP8 rows into the owners' receive buffers
//   plan_receive    its own experts' row segments once every rank's counts are in (and, with
//                   the shared expert in the routed launch, its own tokens' rows after them)
//   experts         L1/L2 over the rows it received (acquiring each row's flag), then "done"
//   shared_expert   the shared expert over its own tokens
//   combine         pulls each token's k expert outputs from their owners + the shared one
// Buffers the peers touch live in the rank's one symmetric region (engine/backends/cuda/
// symmetric_memory.h: plain pointers, CUDA IPC or an NCCL window; layout: ep_symmetric_layout.h)
// and are double-buffered by the step's parity, which the host alternates (begin_step), so
// nothing is cleared between steps. Kernels: kernels/moe/ep_dispatch.h.
// Steps that wait on peers do so on the device with a deadline (error(), never a hang).

#include <cuda_runtime.h>

#include <cstdint>
#include <optional>

#include "engine/backends/cuda/device_buffer.h"
#include "engine/backends/cuda/symmetric_memory.h"
#include "engine/common/status.h"
#include "kernels/moe/ep_dispatch.h"
#include "kernels/moe/ep_symmetric_layout.h"
#include "kernels/moe/moe_layer_sequential.h"

namespace gcmoe::kernels {

// How a rank hands its receive state from one step to the next.
enum class EpStepHandoff {
  kDoubleBuffered,   // GC-MoE: two buffer sets by the step's parity, nothing between steps
  kCleanAndBarrier,  // the standard pipeline's: one set, zeroed after the combine, then a barrier
};

class EpMoeRank {
 public:
  // Bytes of the symmetric region every rank of such a group needs.
  static std::size_t symmetric_bytes(MoeLayerConfig const& config, int max_tokens, int ranks);
  // config: the whole layer (E routed experts); max_tokens: most tokens any rank brings;
  // memory: this rank's region of at least symmetric_bytes with every peer's base known (its
  // rank and rank count must match). Peers on other GPUs make every flag system-scope.
  static StatusOr<EpMoeRank> create(MoeLayerConfig const& config, int max_tokens, int ranks,
                                    int rank, cuda::SymmetricMemory memory);

  // The buffer set of the step begun last (what a graph captured by enqueue_step uses).
  int parity() const { return parity_; }
  // Starts a step (a layer replay): the next parity (always 0 with kCleanAndBarrier). Host-side.
  void begin_step() { parity_ = handoff_ == EpStepHandoff::kDoubleBuffered ? parity_ ^ 1 : 0; }

  // weights: the router over all E experts (gate_weight, bias) and this rank's packed experts —
  // its E/R routed ones (local index), then the shared one (shared_index = E/R).
  Status route(MoeLayerDeviceWeights const& weights, float const* x, int num_tokens,
               cudaStream_t stream);
  Status publish_counts(int num_tokens, cudaStream_t stream);
  Status dispatch(float const* x, int num_tokens, cudaStream_t stream);
  // x: this rank's tokens (read only with the shared expert in the routed launch).
  Status plan_receive(MoeLayerDeviceWeights const& weights, float const* x, int num_tokens,
                      cudaStream_t stream);
  // combine_clears_rows: with down_by_rows, no clear kernel after L2; this step's combine (with
  // tokens of its own, so that it runs) zeroes the counters.
  Status experts(MoeLayerDeviceWeights const& weights, cudaStream_t stream,
                 bool combine_clears_rows = false);
  // alone: on the compute stream after the routed experts (else beside them on a side stream).
  Status shared_expert(MoeLayerDeviceWeights const& weights, float const* x, int num_tokens,
                       cudaStream_t stream, bool alone = true);
  // out: [T, H] fp32 values of bf16 numbers; the step's last call (advances the epoch). With
  // down_by_rows it zeroes the L1 -> L2 counters too (when T > 0).
  Status combine(MoeLayerDeviceWeights const& weights, int num_tokens, float* out,
                 cudaStream_t stream);

  // Where the shared expert runs (default kSeparate: its own launches over the rank's tokens,
  // which GC-MoE starts beside the router). kWithRouted: its rows join the receive layout as one
  // more segment and the routed launch covers them — the sequential baseline's faster placement at
  // decode sizes (bench_moe_layer), for comparing GC-MoE against that baseline at its best.
  void set_shared_expert_launch(SharedExpertLaunch launch) { shared_launch_ = launch; }
  // Whether the expert L2 launches start while L1 drains (programmatic dependent launch; default
  // true). The small kernels' launch chains stay on either way. Read when a step is enqueued
  // (captured).
  void set_overlap_down(bool overlap_down) { overlap_down_ = overlap_down; }
  // With overlap_down: L2 acquires L1's rows pass by pass instead of waiting for L1's whole grid
  // (MoeLayerSync::rows_done; default false). Read when a step is enqueued.
  void set_down_by_rows(bool down_by_rows) { down_by_rows_ = down_by_rows; }
  // The L1 -> L2 row counters, zero between steps (tests).
  cuda::DeviceBuffer<int> const& rows_done() const { return rows_done_; }
  // The SMs its GEMMs' stream may use (MoeLayerSync::compute_sms); 0: the device's.
  void set_compute_sms(int compute_sms) { compute_sms_ = compute_sms; }
  // Default kDoubleBuffered. kCleanAndBarrier is for the sequential baseline as issue 6 describes
  // the standard pipeline (ep_clean_and_barrier after the combine); every rank of a group must use
  // the same handoff, changed only between steps with no step in flight.
  void set_step_handoff(EpStepHandoff handoff) { handoff_ = handoff; }
  // How long a wait for a peer may take before the step ends in an error (default 2 s).
  void set_timeout_ns(std::uint64_t ns) { timeout_ns_ = ns; }
  // Where one whole step goes when the rank has a GPU of its own: the routing, GEMM and combine
  // on `compute`, the count exchange and dispatch on `comm`, the shared expert on `side` (GC-MoE:
  // comm and compute in their green contexts, side a second compute stream); all three the same
  // stream for the sequential baseline. The events fork and join the streams (capturable).
  struct Streams {
    cudaStream_t compute = nullptr;
    cudaStream_t comm = nullptr;
    cudaStream_t side = nullptr;
    cudaEvent_t fork = nullptr;
    cudaEvent_t comm_done = nullptr;
    cudaEvent_t side_done = nullptr;
  };
  // begin_step, then every step above in this rank's own order.
  Status enqueue_step(MoeLayerDeviceWeights const& weights, float const* x, int num_tokens,
                      float* out, Streams const& streams);

  // DEADLINE_EXCEEDED when a wait of this rank timed out since the last check (syncs the device;
  // work on green-context streams must be waited for first, cuda::SmPartition::synchronize, as a
  // device synchronization did not cover it on the GPU machine);
  // the message names the waits and details the first (whose flag, the epoch it waited for, the
  // value it saw) and this rank's epoch now.
  Status error();
  MoeLayerSequential& local() { return *local_; }
  int rank() const { return rank_; }

 private:
  EpMoeRank() = default;
  EpStep step() const;
  bool fused_shared(MoeLayerDeviceWeights const& weights) const {
    return weights.has_shared && shared_launch_ == SharedExpertLaunch::kWithRouted;
  }
  MoeLayerSync sync() const;
  // L2 acquires L1's rows (down_by_rows, which needs L2 by PDL).
  bool by_rows() const { return overlap_down_ && down_by_rows_; }

  MoeLayerConfig config_;
  int ranks_ = 1;
  int rank_ = 0;
  int max_tokens_ = 0;
  int capacity_ = 0;  // rows this rank can receive
  int parity_ = 1;    // begin_step makes the first step's 0
  std::uint64_t timeout_ns_ = 2'000'000'000;
  bool system_scope_ = false;
  SharedExpertLaunch shared_launch_ = SharedExpertLaunch::kSeparate;
  bool overlap_down_ = true;
  bool down_by_rows_ = false;
  int compute_sms_ = 0;
  EpStepHandoff handoff_ = EpStepHandoff::kDoubleBuffered;
  std::optional<MoeLayerSequential> local_;  // routing and the shared expert; always set
  // Symmetric (peers read or write them): this rank's region and every rank's buffers in it.
  cuda::SymmetricMemory memory_;
  EpPeers peers_;
  // Local.
  cuda::DeviceBuffer<int> send_base_, recv_offsets_, active_, num_active_, layout_ready_, epoch_;
  cuda::DeviceBuffer<std::int32_t> pair_rank_, pair_row_;
  cuda::DeviceBuffer<std::uint8_t> h_;
  cuda::DeviceBuffer<int> rows_done_;  // [capacity] L1 -> L2 counters (down_by_rows)
  cuda::DeviceBuffer<float> h_scales_;
  cuda::DeviceBuffer<unsigned> error_;
  cuda::DeviceBuffer<EpWaitDetail> first_timeout_;
};

}  // namespace gcmoe::kernels
