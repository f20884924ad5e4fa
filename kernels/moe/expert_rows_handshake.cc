#include "kernels/moe/expert_rows_handshake.h"

#include <array>
#include <span>

#include "engine/common/check.h"
#include "engine/common/cuda_check.h"
#include "kernels/moe/expert_rows_clear.h"

namespace gcmoe::kernels {

StatusOr<ExpertRowsHandshake> ExpertRowsHandshake::create(int rows, cudaStream_t stream) {
  GCMOE_CHECK_ARG(rows > 0, "rows handshake: bad row count {}", rows);
  ExpertRowsHandshake h;
  GCMOE_ASSIGN_OR_RETURN(h.rows_done_,
                         cuda::DeviceBuffer<int>::allocate(static_cast<std::size_t>(rows)));
  GCMOE_ASSIGN_OR_RETURN(h.error_, cuda::DeviceBuffer<unsigned>::allocate(1));
  GCMOE_RETURN_IF_ERROR(h.rows_done_.fill_bytes(0));
  GCMOE_RETURN_IF_ERROR(h.error_.fill_bytes(0));
  GCMOE_RETURN_IF_ERROR(preload_clear_rows_done());
  GCMOE_CHECK_CUDA(cudaStreamSynchronize(stream));
  return h;
}

Status link_rows_done(Fp8ExpertGemmArgs& l1, Fp8ExpertGemmArgs& l2, int* rows_done,
                      unsigned* error) {
  GCMOE_CHECK_ARG_MSG(l1.stage == ExpertGemmStage::kGateUp && l1.tiles % kExpertGemmWarps == 0,
                      "rows handshake: L1 is the gate/up stage of 128-output tile groups");
  GCMOE_CHECK_ARG_MSG(rows_done != nullptr && error != nullptr,
                      "rows handshake: no counters or no error flag");
  l1.rows_done = rows_done;
  l1.allow_overlap_next = true;  // L2 may start while L1 runs
  l2.rows_done = nullptr;
  l2.ready_blocks = rows_done;
  l2.ready_block_rows = 1;
  l2.ready_epoch = l1.tiles / kExpertGemmWarps;  // every L1 tile group has stored the row
  l2.ready_epoch_device = nullptr;
  l2.ready_system_scope = false;  // L1 ran on this GPU
  l2.error = error;
  l2.overlap_previous = true;
  l2.x_ready_by_rows = true;
  return Status();
}

Status ExpertRowsHandshake::apply(Fp8ExpertGemmArgs& l1, Fp8ExpertGemmArgs& l2,
                                  std::int64_t rows) const {
  GCMOE_CHECK_ARG(rows >= 0 && rows <= this->rows(), "rows handshake: {} rows, counters for {}",
                  rows, this->rows());
  GCMOE_RETURN_IF_ERROR(link_rows_done(l1, l2, rows_done_.data(), error_.data()));
  l2.allow_overlap_next = true;  // finish()'s clear starts early
  return Status();
}

Status ExpertRowsHandshake::finish(cudaStream_t stream) const {
  return launch_clear_rows_done(rows_done_.data(), rows(), true, stream);
}

Status ExpertRowsHandshake::check(cudaStream_t stream) const {
  GCMOE_CHECK_CUDA(cudaStreamSynchronize(stream));
  std::array<unsigned, 1> error{};
  GCMOE_RETURN_IF_ERROR(error_.copy_to_host(std::span<unsigned>(error)));
  if (error[0] != 0u) {
    return deadline_exceeded_error(
        "expert ffn: an L2 stopped waiting for rows its L1 did not release");
  }
  return Status();
}

}  // namespace gcmoe::kernels
