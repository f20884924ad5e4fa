// Expert parallelism with one process per rank, every rank on the one GPU, regions shared by CUDA
// IPC (kernels/moe/ep_moe_rank.h, engine/backends/cuda/symmetric_memory.h). The processes are
// time-sliced on the GPU (no MPS), so this proves the cross-process protocol, not its speed.
// Each rank checks its outputs against the single-rank layer (bit for bit) and the CPU reference
// (tests/gpu/kernels/moe/ep_moe_rank_process.cc).
#include <cstdio>
#include <cstdlib>

#include "tests/gpu/kernels/moe/ep_moe_rank_process.h"
#include "tests/support/catch.h"
#include "tests/support/child_process.h"

namespace gcmoe::testing {
namespace {

void check_group(EpProcessGroup const& g, char const* what) {
  std::vector<int> const codes = run_ep_process_group(g);
  for (std::size_t r = 0; r < codes.size(); ++r) {
    std::printf("%s: rank %zu exit code %d%s\n", what, r, codes[r],
                codes[r] == kChildTimedOut ? " (timed out, killed)" : "");
    CHECK(codes[r] == 0);
  }
}

TEST_CASE("EP over CUDA IPC: 2 and 4 rank processes sharing one GPU equal the single-rank layer") {
  for (int const ranks : {2, 4}) {
    EpProcessGroup g;
    g.memory = EpProcessMemory::kCudaIpc;
    g.ranks = ranks;
    g.steps = ranks == 2 ? 4 : 3;
    check_group(g, ranks == 2 ? "ipc, 2 processes" : "ipc, 4 processes");
  }
}

// Diagnostics only (hidden): one configuration from the environment.
TEST_CASE("EP over CUDA IPC, one configuration", "[.ep_ipc_one]") {
  EpProcessGroup g;
  g.ranks = std::atoi(std::getenv("EP_RANKS") != nullptr ? std::getenv("EP_RANKS") : "4");
  g.steps = 4;
  g.placement = std::getenv("EP_PLACEMENT") != nullptr ? std::getenv("EP_PLACEMENT") : "alternate";
  check_group(g, "ipc, one configuration");
}

TEST_CASE("EP over CUDA IPC: the shared expert in the routed launch equals the single-rank layer") {
  EpProcessGroup g;
  g.memory = EpProcessMemory::kCudaIpc;
  g.ranks = 2;
  g.steps = 3;
  g.placement = "fused";
  check_group(g, "ipc, shared expert fused");
}

TEST_CASE("EP over CUDA IPC: the clean-and-barrier handoff equals the single-rank layer") {
  EpProcessGroup g;
  g.memory = EpProcessMemory::kCudaIpc;
  g.ranks = 2;
  g.steps = 4;
  g.placement = "clean";
  check_group(g, "ipc, clean pass and barrier");
}

TEST_CASE("EP over CUDA IPC: a rank process that never steps ends its peer's step in an error") {
  EpProcessGroup g;
  g.memory = EpProcessMemory::kCudaIpc;
  g.ranks = 2;
  g.absent_rank = 1;
  g.timeout_ms = 1000;
  check_group(g, "ipc, absent rank");
}

}  // namespace
}  // namespace gcmoe::testing
