// The L1 -> L2 handshake by rows (kernels/moe/expert_rows_handshake.h): the arguments its owner
// and the launchers refuse (and the FP8 launchers' refusal of persistent CTAs' work counters),
// and the counters' clear. The handshake in use (three pairs in a row,
// h poisoned; an L1 that never releases) is tested with the FFN cases
// (fp8_expert_wgmma_passes_test, mxfp4_expert_wgmma_test).
#include "kernels/moe/expert_rows_handshake.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/backends/cuda/stream.h"
#include "kernels/moe/fp8_expert_gemm.h"
#include "kernels/moe/fp8_expert_wgmma.h"
#include "tests/support/catch.h"

namespace gcmoe::kernels {
namespace {

TEST_CASE("rows handshake: its owner and the launchers refuse what it cannot serve") {
  auto stream = cuda::Stream::create();
  REQUIRE(stream.ok());
  CHECK(ExpertRowsHandshake::create(0, stream->get()).status().code() ==
        StatusCode::kInvalidArgument);
  auto handshake = ExpertRowsHandshake::create(64, stream->get());
  REQUIRE(handshake.ok());
  Fp8ExpertGemmArgs l1;
  l1.stage = ExpertGemmStage::kGateUp;
  l1.tiles = 2048 / 8;  // 16 tile groups of 128 outputs
  Fp8ExpertGemmArgs l2;
  l2.stage = ExpertGemmStage::kDown;
  // More rows than the counters cover.
  CHECK(handshake->apply(l1, l2, 65).code() == StatusCode::kInvalidArgument);
  // An L1 whose tiles are not whole 128-output tile groups.
  Fp8ExpertGemmArgs ragged = l1;
  ragged.tiles = 2048 / 8 + 1;
  CHECK(handshake->apply(ragged, l2, 64).code() == StatusCode::kInvalidArgument);
  // An L1 that waits for its x rows (the dispatch ring's counters) keeps them: it releases its
  // h rows through the handshake all the same.
  int ready = 0;
  Fp8ExpertGemmArgs with_ready = l1;
  with_ready.ready_blocks = &ready;
  Fp8ExpertGemmArgs l2_of_ready = l2;
  REQUIRE(handshake->apply(with_ready, l2_of_ready, 64).ok());
  CHECK(with_ready.ready_blocks == &ready);
  CHECK(with_ready.rows_done != nullptr);
  // The gate/up stage releases; the down stage acquires at L1's tile-group count.
  CHECK(handshake->apply(l2, l1, 64).code() == StatusCode::kInvalidArgument);
  REQUIRE(handshake->apply(l1, l2, 64).ok());
  CHECK(l1.rows_done != nullptr);
  CHECK(l2.ready_blocks == l1.rows_done);
  CHECK(l2.ready_block_rows == 1);
  CHECK(l2.ready_epoch == 16);
  CHECK(l2.x_ready_by_rows);
  CHECK(l2.overlap_previous);
  CHECK(l1.allow_overlap_next);
  // The mma.sync version has no handshake: refused, never ignored (valid arguments otherwise,
  // with no expert active, so nothing launches: the control passes).
  alignas(16) std::uint8_t bytes[16] = {};
  alignas(16) float scales[4] = {};
  int zero = 0;
  Fp8ExpertGemmArgs plain = l1;
  plain.rows_done = nullptr;
  plain.weights = plain.x = plain.h = bytes;
  plain.weight_scales = plain.x_scales = plain.h_scales = scales;
  plain.expert_offsets = plain.active_experts = plain.num_active = &zero;
  plain.chunks = 2;
  plain.max_active = 0;
  CHECK(launch_fp8_expert_gemm(plain, stream->get()).ok());
  plain.rows_done = l1.rows_done;
  CHECK(launch_fp8_expert_gemm(plain, stream->get()).code() == StatusCode::kInvalidArgument);
  // Persistent CTAs (work_counters) are the MXFP4 kernel's option: both FP8 launchers refuse them.
  plain.rows_done = nullptr;
  CHECK(launch_fp8_expert_wgmma(plain, stream->get()).ok());
  plain.work_counters = &zero;
  CHECK(launch_fp8_expert_gemm(plain, stream->get()).code() == StatusCode::kInvalidArgument);
  CHECK(launch_fp8_expert_wgmma(plain, stream->get()).code() == StatusCode::kInvalidArgument);
}

TEST_CASE("rows handshake: finish zeroes the counters and check reads the error flag") {
  auto stream = cuda::Stream::create();
  REQUIRE(stream.ok());
  constexpr int kRows = 20000;  // more than the clear's 64 x 256 threads: its loop strides
  auto handshake = ExpertRowsHandshake::create(kRows, stream->get());
  REQUIRE(handshake.ok());
  Fp8ExpertGemmArgs l1;
  l1.stage = ExpertGemmStage::kGateUp;
  l1.tiles = 256 / 8;
  Fp8ExpertGemmArgs l2;
  REQUIRE(handshake->apply(l1, l2, kRows).ok());
  std::vector<int> const counts(kRows, 7);
  REQUIRE(cudaMemcpy(l1.rows_done, counts.data(), kRows * sizeof(int), cudaMemcpyHostToDevice) ==
          cudaSuccess);
  REQUIRE(handshake->finish(stream->get()).ok());
  CHECK(handshake->check(stream->get()).ok());
  std::vector<int> after(kRows, -1);
  REQUIRE(cudaMemcpy(after.data(), l1.rows_done, kRows * sizeof(int), cudaMemcpyDeviceToHost) ==
          cudaSuccess);
  CHECK(std::count(after.begin(), after.end(), 0) == kRows);
}

}  // namespace
}  // namespace gcmoe::kernels
