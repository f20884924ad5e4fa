#pragma once
// The device state of the L1 -> L2 handshake by rows (Fp8ExpertGemmArgs::rows_done) for expert
// FFN launch pairs: each pair's L1 counts its tile groups' finished passes per row, its L2
// (launched by PDL) acquires a row once all have, and a kernel after L2 zeroes the counters
// (expert_rows_clear.h), so a CUDA graph replays the pairs unchanged. Pairs run one after another
// on one stream, each L1 -> L2 -> finish in that order.

#include <cuda_runtime.h>

#include <cstdint>

#include "engine/backends/cuda/device_buffer.h"
#include "engine/common/status.h"
#include "kernels/moe/fp8_expert_gemm.h"

namespace gcmoe::kernels {

// Sets the handshake's fields on one launch pair's arguments, over the counters at rows_done (one
// per row of the pair's x, h and y; zero before L1): L1 adds one per tile group to each row it
// stores and lets L2 start early; L2, launched by PDL, acquires each pass's rows there (at L1's
// tile-group count, gpu scope; past its ready_timeout_ns it raises kWaitRows in `error`) instead
// of waiting for L1's grid. What follows L2 (its allow_overlap_next) is the caller's: the
// counters' clear (launch_clear_rows_done) or a combine that zeroes them. INVALID_ARGUMENT unless
// L1 is the gate/up stage of whole 128-output tile groups.
Status link_rows_done(Fp8ExpertGemmArgs& l1, Fp8ExpertGemmArgs& l2, int* rows_done,
                      unsigned* error);

class ExpertRowsHandshake {
 public:
  // For launch pairs over up to `rows` rows of x, h and y (from the pointers the pair is given).
  static StatusOr<ExpertRowsHandshake> create(int rows, cudaStream_t stream);

  // Sets the handshake's fields on a pair's L1 and L2 arguments over `rows` rows (at most
  // create's): L1 counts its rows in rows_done and lets L2 start early; L2 is launched by PDL,
  // acquires them instead of waiting for L1's grid, and lets the counters' clear start early
  // (allow_overlap_next on both). INVALID_ARGUMENT past the capacity.
  Status apply(Fp8ExpertGemmArgs& l1, Fp8ExpertGemmArgs& l2, std::int64_t rows) const;

  // After the pair's L2 on the same stream: zeroes the counters once L2 has completed.
  Status finish(cudaStream_t stream) const;

  // OK, or DEADLINE_EXCEEDED when an L2 stopped waiting for rows its L1 did not release (its
  // output is then wrong). Synchronizes the stream.
  Status check(cudaStream_t stream) const;

  int rows() const { return static_cast<int>(rows_done_.size()); }

 private:
  cuda::DeviceBuffer<int> rows_done_;
  cuda::DeviceBuffer<unsigned> error_;
};

}  // namespace gcmoe::kernels
