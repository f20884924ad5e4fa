#pragma once
// One expert-parallel rank as its own process (the child side of the multi-process GPU tests):
// the parent test starts N copies of its executable, each running the hidden test case
// "[.ep_rank_process]" with its parameters in GCMOE_EP_* environment variables. Each child joins
// the group over a shared-memory bootstrap Communicator, shares its symmetric region (CUDA IPC or
// an NCCL window), runs several layer steps through EpMoeRank::enqueue_step and checks every
// output against the single-rank layer on its own GPU (bit for bit) and the CPU reference.

#include <string>
#include <vector>

#include "kernels/moe/moe_layer_sequential.h"
#include "tests/gpu/kernels/moe/moe_layer_fixture.h"

namespace gcmoe::testing {

// What every EP test shares (in one process or as rank processes).
// The ranks of a test with one rank per GPU (4 where there are 4 GPUs or more, else 2), with
// peer access enabled between their devices both ways (REQUIRE: every pair can); device 0 current.
int multi_gpu_ranks();
// Rank r's tokens in step s: uneven, and rank 1 brings none in step 2.
int ep_tokens_of(int rank, int step, int max_tokens);

// The single-rank layer (all experts, the shared expert in its own launch) on x's first t tokens
// (device, the fixture's device), copied back: [t, H].
std::vector<float> single_rank_out(kernels::MoeLayerSequential& single, MoeLayerFixture& f,
                                   float const* x, int t);

enum class EpProcessMemory { kCudaIpc, kNcclWindow };

struct EpProcessGroup {
  EpProcessMemory memory = EpProcessMemory::kCudaIpc;
  int ranks = 2;
  bool gpu_per_rank = false;  // rank r on device r; else every rank on device 0
  int steps = 4;
  // A rank that joins and shares its region but never steps (-1: none): its peers must end their
  // first step with DEADLINE_EXCEEDED within timeout_ms, not hang.
  int absent_rank = -1;
  int timeout_ms = 30000;
  // Where each step's kernels go: "alternate" (even steps on one stream, odd steps split over
  // compute, comm and side streams as GC-MoE places them), "one-stream", "split", "fused" (one
  // stream, the shared expert's rows in the routed launch) or "clean" (one stream, one receive
  // buffer set cleaned after each step, then a barrier: EpStepHandoff::kCleanAndBarrier).
  std::string placement = "alternate";
};

// Starts the group's processes and waits for them (deadline: generous for time-sliced ranks);
// returns each rank's exit code (0: every check passed).
std::vector<int> run_ep_process_group(EpProcessGroup const& group);

}  // namespace gcmoe::testing
