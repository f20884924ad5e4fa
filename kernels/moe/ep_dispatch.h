#pragma once
// Expert parallelism across ranks for the GC-MoE operator (issue 6): the count exchange, the row
// layout every rank derives from it (CPU reference: kernels/moe/ep_plan_ref.h), the dispatch of
// FP8 rows into the owners' receive buffers, the end-of-GEMM signal and the combine that pulls each
// token's expert outputs back from their owners.
//
// Ranks see each other's buffers through plain device pointers: the same GPU (virtual ranks in one
// process), CUDA IPC mappings (processes sharing a GPU) or NCCL symmetric-window LSA pointers
// (GPUs of one node). Every cross-rank signal is an epoch flag: a release store of the layer's
// epoch, acquired by a spin with a deadline that raises *error instead of hanging. Receive
// buffers, counts and their flags come in two sets chosen by the replay's parity (the host
// alternates two graphs), so a fast rank writing replay p+1 never overwrites what a slow rank
// still reads for replay p, and nothing is cleared between replays.
// Flags use gpu-scope release/acquire among ranks of one GPU and system scope (system_scope)
// when peers sit on other GPUs.

#include <cuda_runtime.h>

#include <cstdint>

#include "engine/common/status.h"
#include "kernels/moe/fp8_expert_gemm.h"

namespace gcmoe::kernels {

inline constexpr int kMaxEpRanks = 8;

// One rank's buffers that its peers write or read.
struct EpRankBuffers {
  std::uint8_t* recv_xq[2] = {};  // [capacity, H] e4m3 rows it receives, by parity
  float* recv_scales[2] = {};     // [capacity, H / 128]
  float* recv_weights[2] = {};    // [capacity] each received row's routing weight
  int* row_flags[2] = {};         // [capacity] epoch flag per received row
  int* counts[2] = {};            // [R, E] pairs each source routed to each expert
  int* count_flags[2] = {};       // [R] epoch flag per source's counts
  int* done_flags = nullptr;      // [R] epoch flag: owner d's expert outputs are complete
  int* barrier_flags = nullptr;   // [R] epoch flag: rank s passed its step's end (baseline only)
  std::uint16_t* y = nullptr;     // [capacity, H] bf16 expert outputs of the received rows
};

struct EpPeers {
  int ranks = 1;
  EpRankBuffers rank[kMaxEpRanks];
};

// The first wait of a rank that passed its deadline (kernels/moe/wait_sites.h), for the host's
// DEADLINE_EXCEEDED message: which flag, the epoch it waited for and the last value it read. A
// flag behind by one or two epochs is a peer that is late or stuck; one on another parity's
// schedule a peer replaying another graph.
struct EpWaitDetail {
  int site = 0;    // one kWait* bit; 0: no timeout recorded
  int peer = -1;   // the rank whose flag it was (-1: this rank's own layout)
  int parity = 0;  // the step's buffer set
  int target = 0;  // the epoch waited for
  int seen = 0;    // the flag's last value
};

// What every EP kernel of one rank's step shares.
struct EpStep {
  EpPeers peers;
  int rank = 0;
  int parity = 0;  // the replay's buffer set, 0 or 1
  int num_experts = 0;
  int hidden = 0;
  int const* epoch = nullptr;             // device scalar, the same on every rank in a step
  unsigned* error = nullptr;              // wait_sites.h bits of the waits past timeout_ns
  EpWaitDetail* first_timeout = nullptr;  // optional: the first such wait, in detail
  std::uint64_t timeout_ns = 2'000'000'000;
  // Peers on other GPUs (peer-mapped memory): flags are published and acquired at system scope.
  bool system_scope = false;
};

// 1. After the local routing (expert_offsets over all E experts of this rank's own pairs,
// published by the active-list kernel through `wait_layout`): this rank's counts go to every
// rank's count matrix, then its count flag. Null expert_offsets: a rank with no tokens (zeros).
Status ep_publish_counts(EpStep const& step, int const* expert_offsets, int const* wait_layout,
                         cudaStream_t stream);

// 2. Once every rank's counts are in: send_base [E] for this rank's dispatch and/or this rank's
// receive layout (recv_offsets [E/R + 1], active [E/R] local experts with rows, num_active).
struct EpPlanOutputs {
  int* send_base = nullptr;
  int* recv_offsets = nullptr;  // [E/R + 2] with a shared segment
  int* active = nullptr;        // [E/R + 1] with a shared segment
  int* num_active = nullptr;
  // ≥ 0: the receive layout ends with a segment of this many rows for the shared expert, as
  // local expert E/R (its packed index on this rank), active when not empty.
  int shared_rows = -1;
};
Status ep_plan(EpStep const& step, EpPlanOutputs const& out, cudaStream_t stream);

// 3. One block per own expert-sorted pair row: quantize the token (FP8, the model's recipe) into
// the owner's receive buffer at send_base[e] + its index among the pairs to e, store its routing
// weight, remember where it went (pair_rank/pair_row) and release the row's flag at the owner.
struct EpDispatchRows {
  float const* x = nullptr;                  // [T, H] fp32
  std::int32_t const* sorted_ids = nullptr;  // [T·k] align & sort's pair order (block size 1)
  std::int32_t const* topk_ids = nullptr;    // [T·k]
  float const* topk_weights = nullptr;       // [T·k]
  int const* expert_offsets = nullptr;       // [E + 1] own pairs per expert
  int const* send_base = nullptr;            // [E] from ep_plan
  int num_tokens = 0;
  int top_k = 1;
  RequantScale recipe = RequantScale::kAmaxOver448;
  std::int32_t* pair_rank = nullptr;  // [T·k] owner of each pair
  std::int32_t* pair_row = nullptr;   // [T·k] its row there
};
Status ep_dispatch_rows(EpStep const& step, EpDispatchRows const& rows, cudaStream_t stream);

// 3b. The shared expert in the routed launch: this rank's own tokens quantized into its own
// receive buffer at the shared segment (recv_offsets[E/R] + t, after ep_plan), weight 1, flags
// released like any received row.
Status ep_dispatch_shared_rows(EpStep const& step, float const* x, int num_tokens,
                               RequantScale recipe, int const* recv_offsets, cudaStream_t stream);

// 4. After this rank's L2: its outputs (peers.rank[rank].y) are complete; tell every source.
Status ep_signal_done(EpStep const& step, cudaStream_t stream);

// 5. Waits for every owner's done flag, then out[t] = Σ_j w_j · y_owner[row of (t, j)] (weights
// applied when apply_weights, GLM-5.2) + shared_y[t], in fp32, rounded once to bf16.
struct EpCombine {
  std::int32_t const* pair_rank = nullptr;
  std::int32_t const* pair_row = nullptr;
  float const* topk_weights = nullptr;
  bool apply_weights = true;
  std::uint16_t const* shared_y = nullptr;  // optional [T, H]
  // Instead of shared_y: the shared expert ran in the routed launch, its rows are this rank's
  // y from row *shared_first_row (device: recv_offsets[E/R]).
  int const* shared_first_row = nullptr;
  int num_tokens = 0;
  int top_k = 1;
  float* out = nullptr;  // [T, H]
  // Optional: this rank's L1 -> L2 row counters (EpMoeRank::set_down_by_rows), clear_rows of them
  // zeroed for the next step in place of a clear kernel after L2 (the combine follows this rank's
  // L2 on its stream).
  int* clear = nullptr;
  int clear_rows = 0;
};
Status ep_combine(EpStep const& step, EpCombine const& combine, cudaStream_t stream);

// The sequential baseline's handoff between replays, as the standard dispatch + grouped-GEMM
// pipeline makes it (single-buffered receive state): after the combine, this rank's receive flags
// and counts of the step's buffer set are zeroed (the clean pass), then every rank tells every
// other one it is done and waits for all of them (the barrier), so no peer writes the next step's
// rows before the clean. GC-MoE needs neither (parity double buffering); this exists to measure it.
Status ep_clean_and_barrier(EpStep const& step, std::int64_t capacity, cudaStream_t stream);

// The step's last kernel: epoch += 1 (every reader of this step's epoch has run before it).
Status ep_advance_epoch(int* epoch, cudaStream_t stream);

// Loads every EP kernel (before any concurrent launch: lazy loading under a spinner deadlocks).
Status preload_ep_dispatch();

}  // namespace gcmoe::kernels
