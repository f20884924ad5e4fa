#pragma once
// What the expert-GEMM GPU tests (FP8: fp8_expert_ffn_case.h, MXFP4: mxfp4_expert_ffn_case.h)
// share around their kernels: a routed batch laid out as the GEMMs read it (each expert's rows
// together, in expert order), its device buffers and the kernels' arguments over them, the CPU
// reference over that layout (whole, or in halves around the kernel's own h), the token ring's
// readiness counters and their late release, and the L1 -> L2 launch pairs (in stream order or
// with the rows handshake).

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <random>
#include <span>
#include <vector>

#include "engine/backends/cuda/device_buffer.h"
#include "engine/common/status.h"
#include "engine/formats/activation_quant.h"
#include "kernels/moe/expert_ffn_ref.h"
#include "kernels/moe/fp8_expert_gemm.h"
#include "tests/support/requant_check.h"

namespace gcmoe::testing {

// top_k distinct experts per token, drawn uniformly (with expert_zero_always, expert 0 is one of
// them for every token): tokens_of[e], the tokens routed to expert e, ascending.
std::vector<std::vector<int>> route_top_k(int tokens, int experts, int top_k,
                                          bool expert_zero_always, std::mt19937_64& rng);
// [tokens, hidden] values uniform in [-2, 2).
std::vector<float> random_tokens(int tokens, std::int64_t hidden, std::mt19937_64& rng);

struct ExpertSlots {
  std::vector<int> offsets = {0};  // [E + 1] each expert's first row
  std::vector<int> active;         // the experts with rows, ascending
  std::vector<float> x;            // [rows, H] each row's token
  std::vector<float> weight;       // [rows] routing weights, uniform in [0.05, 1)
  std::int64_t rows() const { return static_cast<std::int64_t>(weight.size()); }
};

// tokens_of[e]: the tokens routed to expert e; x: [T, hidden]. Draws one weight per row from rng.
ExpertSlots group_by_expert(std::vector<std::vector<int>> const& tokens_of,
                            std::vector<float> const& x, std::int64_t hidden, std::mt19937_64& rng);

// The batch on the device: its FP8 rows and the row layout (inputs), the routing weights, and the
// GEMMs' outputs h ([rows, I] FP8 with a scale per 128) and y ([rows, H] bf16, poisoned with NaN
// so that a row nobody wrote fails the comparison).
struct DeviceExpertBatch {
  cuda::DeviceBuffer<std::uint8_t> x;
  cuda::DeviceBuffer<float> x_scales;
  cuda::DeviceBuffer<int> offsets, active, num_active;
  cuda::DeviceBuffer<float> route;
  cuda::DeviceBuffer<std::uint8_t> h;
  cuda::DeviceBuffer<float> h_scales;
  cuda::DeviceBuffer<std::uint16_t> y;
  int experts_with_rows = 0;
};
DeviceExpertBatch upload_batch(ExpertSlots const& slots, formats::Fp8Activations const& xq,
                               std::int64_t hidden, std::int64_t inter);

// L1 (gate/up) arguments over the batch: its rows, layout and outputs, tiles and chunks for
// [hidden, inter], the hint; the caller sets the weights, the model's semantics and readiness.
kernels::Fp8ExpertGemmArgs gate_up_args(DeviceExpertBatch const& batch, std::int64_t hidden,
                                        std::int64_t inter, int rows_per_expert_hint);
// L2 (down) arguments from L1's: h in, y out, no readiness counters (L2 reads h, which L1 wrote
// in stream order); the caller sets the weights.
kernels::Fp8ExpertGemmArgs down_args(kernels::Fp8ExpertGemmArgs const& gate_up,
                                     DeviceExpertBatch const& batch, std::int64_t hidden,
                                     std::int64_t inter);

// The token ring's readiness counters for a batch of `rows` rows (one per kBlockRows rows, all 0:
// nothing ready) and the kernels' error flag (0).
struct ReadyCounters {
  static constexpr int kBlockRows = 8;
  int blocks = 0;
  cuda::DeviceBuffer<int> ready;
  cuda::DeviceBuffer<unsigned> error;
  // args waits on the counters for `epoch` (each at most timeout_ns) and raises the error flag
  // when they do not arrive.
  void attach(kernels::Fp8ExpertGemmArgs& args, int epoch, std::int64_t timeout_ns) const;
  unsigned error_flag() const;
};
ReadyCounters make_ready_counters(std::int64_t rows);

// The batch's y ([rows, H] bf16) as floats.
std::vector<float> download_y(DeviceExpertBatch const& batch, std::int64_t rows,
                              std::int64_t hidden);

// expert_ffn_ref over every expert's rows: [rows, H].
std::vector<float> expert_ffn_reference(ExpertSlots const& slots,
                                        std::span<kernels::DenseExpertWeights const> experts,
                                        kernels::ExpertFfnOptions const& options);

// The reference in its two halves against the kernel's own intermediate: the kernel's h (FP8
// codes and a scale per 128) checked element by element against the exact h of every row
// (tests/support/requant_check.h, relative `tolerance`), and y computed from the kernel's h as
// its down GEMM read it — so a legitimate e4m3 rounding flip in h is not counted as y error.
struct StagedReference {
  RequantCheck h;
  std::vector<float> y_from_kernel_h;  // [rows, H]
};
StagedReference staged_reference(ExpertSlots const& slots,
                                 std::span<kernels::DenseExpertWeights const> experts,
                                 kernels::ExpertFfnOptions const& options,
                                 DeviceExpertBatch const& batch, double tolerance);

// The kernel on `waiting` must still be running 50 ms after its launch (it waits for the rows):
// then `blocks` counters at `ready` are set to `epoch` from another stream.
void release_rows_late(cudaStream_t waiting, int* ready, int blocks, int epoch);

// How run_ffn_pairs orders L2 after L1.
enum class PairOrder {
  kStream,  // L2 after L1 in stream order, one pair
  // L2 by PDL over L1's rows (kernels/moe/expert_rows_handshake.h): three pairs in a row on one
  // handshake, h poisoned with e4m3 NaN bytes before each, so an L2 that read a row before every
  // L1 tile group released it would carry NaN into y; the handshake's error flag must stay clear.
  kByRows,
  // The same, but L1 never releases its rows: L2 must give up after its 1 ms deadline and raise
  // the error flag (DEADLINE_EXCEEDED), not hang. One pair; y is not meaningful.
  kByRowsNeverReleased,
};

// Launches L1 (`gate_up`) then L2 (`down`) with `launch` on `stream` and waits for them; after_l1
// runs between the two.
void run_ffn_pairs(std::function<Status(kernels::Fp8ExpertGemmArgs const&)> const& launch,
                   kernels::Fp8ExpertGemmArgs gate_up, kernels::Fp8ExpertGemmArgs down,
                   DeviceExpertBatch const& batch, std::int64_t rows, PairOrder order,
                   cudaStream_t stream, std::function<void()> const& after_l1 = {});

}  // namespace gcmoe::testing
