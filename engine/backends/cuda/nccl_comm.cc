#include "engine/backends/cuda/nccl_comm.h"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <cstring>
#include <span>
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
  // Only rank 0 contributes bytes; every rank reads them.
  std::span<std::byte const> const mine =
      rank == 0 ? std::as_bytes(std::span(&id, 1)) : std::span<std::byte const>{};
  std::vector<std::byte> all;
  std::vector<std::size_t> sizes;
  GCMOE_RETURN_IF_ERROR(bootstrap.all_gather(mine, all, sizes));
  GCMOE_CHECK_ARG(sizes.size() == static_cast<std::size_t>(ranks) && sizes[0] == sizeof(id),
                  "the NCCL unique id from rank 0 has {} bytes, expected {}",
                  sizes.empty() ? 0 : sizes[0], sizeof(id));
  std::memcpy(&id, all.data(), sizeof(id));
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
