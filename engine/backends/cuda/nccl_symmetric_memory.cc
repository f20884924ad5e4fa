#include "engine/backends/cuda/nccl_symmetric_memory.h"

#include <spdlog/spdlog.h>

#include <string>
#include <vector>

#include "engine/backends/cuda/nccl_lsa_pointers.h"
#include "engine/common/cuda_check.h"
#include "engine/common/nccl_check.h"

namespace gcmoe::cuda {
namespace {

// NCCL memory registered as a window: deregistered, then freed.
class NcclWindow final : public SymmetricMemory::Backing {
 public:
  NcclWindow(std::shared_ptr<NcclComm> comm, void* data) : comm_(std::move(comm)), data_(data) {}
  ~NcclWindow() override {
    if (window_ != nullptr) {
      ncclCommWindowDeregister(comm_->get(), window_);
    }
    if (data_ != nullptr) {
      ncclMemFree(data_);
    }
  }
  NcclWindow(NcclWindow const&) = delete;
  NcclWindow& operator=(NcclWindow const&) = delete;
  ncclWindow_t& window() { return window_; }

 private:
  std::shared_ptr<NcclComm> comm_;
  void* data_;
  ncclWindow_t window_ = nullptr;
};

}  // namespace

StatusOr<SymmetricMemory> register_nccl_window(std::size_t bytes, std::shared_ptr<NcclComm> comm,
                                               runtime::Communicator& bootstrap) {
  GCMOE_CHECK_ARG_MSG(bytes > 0, "a symmetric region of 0 bytes");
  GCMOE_CHECK_ARG_MSG(comm != nullptr, "no NCCL communicator");
  GCMOE_CHECK_ARG_MSG(comm->ranks() == bootstrap.world_size() && comm->rank() == bootstrap.rank(),
                      "the NCCL communicator and the bootstrap group disagree on the ranks");
  int const ranks = comm->ranks();
  GCMOE_CHECK_ARG_MSG(ranks <= kMaxNcclLsaRanks, "more ranks than one node's LSA team holds");
  int const me = comm->rank();
  std::size_t const registered = (bytes + NCCL_WIN_REQUIRED_ALIGNMENT - 1) /
                                 NCCL_WIN_REQUIRED_ALIGNMENT * NCCL_WIN_REQUIRED_ALIGNMENT;
  void* data = nullptr;
  GCMOE_CHECK_NCCL(comm->get(), ncclMemAlloc(&data, registered));
  auto backing = std::make_unique<NcclWindow>(comm, data);
  GCMOE_CHECK_CUDA(cudaMemset(data, 0, registered));
  GCMOE_CHECK_CUDA(cudaDeviceSynchronize());
  GCMOE_CHECK_NCCL(comm->get(),
                   ncclCommWindowRegister(comm->get(), data, registered, &backing->window(),
                                          NCCL_WIN_COLL_SYMMETRIC));

  std::vector<void*> lsa_pointers(static_cast<std::size_t>(ranks));
  int own_lsa = -1;
  GCMOE_RETURN_IF_ERROR(nccl_lsa_pointers(backing->window(), lsa_pointers, own_lsa));

  // Which LSA rank each group rank is.
  GCMOE_ASSIGN_OR_RETURN(std::vector<int> const lsa_of,
                         runtime::all_gather_each(bootstrap, own_lsa));
  std::vector<int> seen(static_cast<std::size_t>(ranks), 0);
  for (int r = 0; r < ranks; ++r) {
    int const lsa = lsa_of[static_cast<std::size_t>(r)];
    if (lsa < 0 || lsa >= ranks || seen[static_cast<std::size_t>(lsa)]++ != 0) {
      return Status(StatusCode::kFailedPrecondition,
                    "rank " + std::to_string(r) + " has LSA rank " + std::to_string(lsa) +
                        ": not every rank of the group can load/store every other's memory "
                        "(ranks on several nodes need NCCL GIN, not built)");
    }
  }
  std::vector<std::byte*> peers(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    peers[static_cast<std::size_t>(r)] = static_cast<std::byte*>(
        lsa_pointers[static_cast<std::size_t>(lsa_of[static_cast<std::size_t>(r)])]);
  }
  // This rank's own region through its own allocation (the window's flat LSA range aliases it).
  peers[static_cast<std::size_t>(me)] = static_cast<std::byte*>(data);
  SymmetricMemory memory(SymmetricMemoryKind::kNcclWindow, static_cast<std::byte*>(data), bytes, me,
                         std::move(peers), ranks > 1, std::move(backing));
  // Also proves the window's layout is the one these headers describe (an NCCL library older
  // than the headers would give pointers that reach nothing, or the wrong rank).
  GCMOE_RETURN_IF_ERROR(memory.verify_peers(bootstrap));
  int version = 0;
  GCMOE_CHECK_NCCL(comm->get(), ncclGetVersion(&version));
  spdlog::info("rank {}: symmetric region of {} bytes in an NCCL {} window, {} LSA peer(s)", me,
               bytes, version, ranks - 1);
  return memory;
}

}  // namespace gcmoe::cuda
