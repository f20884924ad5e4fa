#pragma once
// An NCCL communicator for the ranks of one serving group, one rank per process and GPU (RAII:
// ncclCommDestroy). Its unique id travels over the group's bootstrap Communicator (the launcher's
// shared-memory rendezvous): rank 0 makes it, every rank receives it in one all_gather — no
// launcher slot and no extra socket.

#include <nccl.h>

#include <memory>

#include "engine/common/status.h"
#include "engine/runtime/communicator.h"

namespace gcmoe::cuda {

class NcclComm {
 public:
  // Collective over `bootstrap` (every rank, same order), on the current device. Sets
  // NCCL_NVLS_ENABLE=0 unless the environment says otherwise (NVLink multicast can take a shared
  // host's GPUs out of service; gpu-machine.md).
  static StatusOr<std::shared_ptr<NcclComm>> create(runtime::Communicator& bootstrap);
  ~NcclComm();
  NcclComm(NcclComm const&) = delete;
  NcclComm& operator=(NcclComm const&) = delete;

  ncclComm_t get() const { return comm_; }
  int rank() const { return rank_; }
  int ranks() const { return ranks_; }

 private:
  NcclComm() = default;
  ncclComm_t comm_ = nullptr;
  int rank_ = 0;
  int ranks_ = 1;
};

}  // namespace gcmoe::cuda
