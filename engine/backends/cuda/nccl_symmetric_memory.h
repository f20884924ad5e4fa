#pragma once
// The NCCL kind of SymmetricMemory (engine/backends/cuda/symmetric_memory.h): each rank's region
// is NCCL memory (ncclMemAlloc) registered as a symmetric window (NCCL_WIN_COLL_SYMMETRIC), and
// every peer's base is the window's LSA pointer for that peer — the load/store-accessible mapping
// NCCL 2.28 sets up over NVLink (or PCIe peer access) among the GPUs of one node.
// Every rank of the group must be in the LSA team (one node): FAILED_PRECONDITION otherwise —
// ranks across nodes would need NCCL's GIN (network) path, which gcmoe does not build yet.

#include <cstddef>
#include <memory>

#include "engine/backends/cuda/nccl_comm.h"
#include "engine/backends/cuda/symmetric_memory.h"

namespace gcmoe::cuda {

// Collective over `comm` and `bootstrap` (the same ranks, every rank the same bytes), on the
// current device. The region is zeroed before the registration makes it visible. The window keeps
// `comm` alive; destroy the memory on every rank after a barrier that follows the last step.
StatusOr<SymmetricMemory> register_nccl_window(std::size_t bytes, std::shared_ptr<NcclComm> comm,
                                               runtime::Communicator& bootstrap);

}  // namespace gcmoe::cuda
