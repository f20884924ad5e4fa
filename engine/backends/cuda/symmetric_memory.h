#pragma once
// One rank's symmetric device region and its view of every peer's region: the memory the GC-MoE
// expert-parallel protocol (kernels/moe/ep_dispatch.h) loads from and stores into across ranks.
// Every rank's region has the same size and the same layout (kernels/moe/ep_symmetric_layout.h),
// so a peer's base pointer is all a rank needs. Three ways to get peers' bases:
//   local   ranks in this process (one rank, virtual ranks on one GPU, or one process driving
//           several GPUs with peer access): cudaMalloc, each region told the others' bases;
//   ipc     one process per rank on one host (ranks sharing a GPU, or one GPU each): cudaMalloc,
//           CUDA IPC handles exchanged over the group's bootstrap Communicator, peers opened;
//   nccl    an NCCL symmetric window per rank, peers by LSA pointer
//           (engine/backends/cuda/nccl_symmetric_memory.h).
// Every region is zeroed (and the zeroing finished) before any peer can learn its address, so
// the protocol's flags start at 0 with no clean pass. Destroying a region while a peer may still
// touch it is a use-after-free on that peer: destroy only after a group barrier that follows
// every rank's last step.

#include <cstddef>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "engine/common/status.h"
#include "engine/runtime/communicator.h"

namespace gcmoe::cuda {

enum class SymmetricMemoryKind { kLocal, kCudaIpc, kNcclWindow };
std::string_view to_string(SymmetricMemoryKind kind);

class SymmetricMemory {
 public:
  // What frees the local region and unmaps the peers' (one per kind).
  class Backing {
   public:
    virtual ~Backing() = default;
  };

  SymmetricMemory() = default;
  SymmetricMemory(SymmetricMemoryKind kind, std::byte* local, std::size_t bytes, int rank,
                  std::vector<std::byte*> peers, bool cross_device,
                  std::unique_ptr<Backing> backing);
  SymmetricMemory(SymmetricMemory&&) noexcept = default;
  SymmetricMemory& operator=(SymmetricMemory&&) noexcept = default;
  ~SymmetricMemory();

  // Every rank of a group in this process: rank r's region (`bytes`, zeroed) on devices[r], each
  // knowing every other's base. Ranks on different GPUs need peer access enabled by the caller;
  // their regions are cross_device (flags then need system scope). The current device is kept.
  static StatusOr<std::vector<SymmetricMemory>> allocate_local_group(std::size_t bytes,
                                                                     std::span<int const> devices);

  // Collective over `group` (every rank calls it with the same bytes): allocates and zeroes this
  // rank's region on the current device, exchanges CUDA IPC handles and opens every peer's.
  // INVALID_ARGUMENT when ranks disagree on the size; what CUDA IPC refuses (two ranks of one
  // process, no peer access between GPUs) comes back as the CUDA error.
  static StatusOr<SymmetricMemory> exchange_ipc(std::size_t bytes, runtime::Communicator& group);

  // Collective over `group`: proves every peer mapping reaches that peer's region (each rank
  // writes a word of its own into its region, every rank reads every peer's through its mapping),
  // then zeroes the word again before any rank returns. FAILED_PRECONDITION names the first
  // mapping that shows another rank's (or no) word. The exchanges run it before returning.
  Status verify_peers(runtime::Communicator& group) const;

  SymmetricMemoryKind kind() const { return kind_; }
  std::byte* local() const { return local_; }
  std::size_t bytes() const { return bytes_; }
  int rank() const { return rank_; }
  int ranks() const { return static_cast<int>(peers_.size()); }
  // Rank r's region as this rank addresses it (local() for r == rank()); null until known.
  std::byte* peer(int r) const { return peers_[static_cast<std::size_t>(r)]; }
  std::vector<std::byte*> const& peers() const { return peers_; }
  // Some peer's region is on another GPU.
  bool cross_device() const { return cross_device_; }

 private:
  SymmetricMemoryKind kind_ = SymmetricMemoryKind::kLocal;
  std::byte* local_ = nullptr;
  std::size_t bytes_ = 0;
  int rank_ = 0;
  std::vector<std::byte*> peers_;
  bool cross_device_ = false;
  std::unique_ptr<Backing> backing_;
};

}  // namespace gcmoe::cuda
