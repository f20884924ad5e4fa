#include "engine/backends/cuda/nccl_comm.h"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <vector>

#include "engine/common/nccl_check.h"

namespace gcmoe::cuda {

StatusOr<std::shared_ptr<NcclComm>> NcclComm::create(runtime::Communicator& bootstrap) {
  if (std::getenv("NCCL_NVLS_ENABLE") == nullptr) {
    setenv("NCCL_NVLS_ENABLE", "0", 0);
  }
  int const rank = bootstrap.rank();
  int const ranks = bootstrap.world_size();
  ncclUniqueId id{};
  if (rank == 0) {
    GCMOE_CHECK_NCCL(nullptr, ncclGetUniqueId(&id));
  }
  // Every rank sends an id (the others' are empty); rank 0's is the group's.
  GCMOE_ASSIGN_OR_RETURN(std::vector<ncclUniqueId> const ids,
                         runtime::all_gather_each(bootstrap, id));
  id = ids.front();
  std::shared_ptr<NcclComm> comm(new NcclComm());
  comm->rank_ = rank;
  comm->ranks_ = ranks;
  GCMOE_CHECK_NCCL(nullptr, ncclCommInitRank(&comm->comm_, ranks, id, rank));
  int version = 0;
  GCMOE_CHECK_NCCL(comm->comm_, ncclGetVersion(&version));
  spdlog::info("rank {}: NCCL {} communicator of {} ranks", rank, version, ranks);
  return comm;
}

NcclComm::~NcclComm() {
  if (comm_ != nullptr) {
    ncclCommDestroy(comm_);  // Nothing to return a failure to at teardown.
  }
}

}  // namespace gcmoe::cuda
