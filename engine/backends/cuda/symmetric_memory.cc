#include "engine/backends/cuda/symmetric_memory.h"

#include <cuda_runtime.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <span>
#include <string>

#include "engine/common/cuda_check.h"

namespace gcmoe::cuda {
namespace {

// A cudaMalloc'd region (local and IPC kinds own theirs this way).
class DeviceRegion final : public SymmetricMemory::Backing {
 public:
  explicit DeviceRegion(void* data) : data_(data) {}
  ~DeviceRegion() override {
    if (data_ != nullptr) {
      cudaFree(data_);  // A failure means the context is gone; nothing to return to.
    }
  }
  DeviceRegion(DeviceRegion const&) = delete;
  DeviceRegion& operator=(DeviceRegion const&) = delete;

 private:
  void* data_;
};

// The IPC kind: the own region and the peers' mappings (closed first).
class IpcRegion final : public SymmetricMemory::Backing {
 public:
  explicit IpcRegion(void* data) : own_(data) {}
  ~IpcRegion() override {
    for (void* const peer : opened_) {
      cudaIpcCloseMemHandle(peer);
    }
  }
  IpcRegion(IpcRegion const&) = delete;
  IpcRegion& operator=(IpcRegion const&) = delete;
  void add_opened(void* peer) { opened_.push_back(peer); }

 private:
  DeviceRegion own_;
  std::vector<void*> opened_;
};

StatusOr<void*> allocate_zeroed(std::size_t bytes) {
  GCMOE_CHECK_ARG(bytes > 0, "a symmetric region of 0 bytes");
  void* data = nullptr;
  GCMOE_CHECK_CUDA(cudaMalloc(&data, bytes));
  cudaError_t const fill = cudaMemset(data, 0, bytes);
  // Zeroed before any peer can see the address: the synchronize orders the memset before the
  // exchange that publishes it.
  cudaError_t const sync = fill == cudaSuccess ? cudaDeviceSynchronize() : fill;
  if (sync != cudaSuccess) {
    cudaFree(data);
    GCMOE_CHECK_CUDA(sync);
  }
  return data;
}

// What each rank publishes in the IPC exchange.
struct IpcRecord {
  cudaIpcMemHandle_t handle;
  std::uint64_t bytes;
  std::int32_t pid;
  std::int32_t device;
  char uuid[16];
};

}  // namespace

std::string_view to_string(SymmetricMemoryKind kind) {
  switch (kind) {
    case SymmetricMemoryKind::kLocal:
      return "local";
    case SymmetricMemoryKind::kCudaIpc:
      return "cuda-ipc";
    case SymmetricMemoryKind::kNcclWindow:
      return "nccl-window";
  }
  return "unknown";
}

SymmetricMemory::SymmetricMemory(SymmetricMemoryKind kind, std::byte* local, std::size_t bytes,
                                 int rank, std::vector<std::byte*> peers, bool cross_device,
                                 std::unique_ptr<Backing> backing)
    : kind_(kind),
      local_(local),
      bytes_(bytes),
      rank_(rank),
      peers_(std::move(peers)),
      cross_device_(cross_device),
      backing_(std::move(backing)) {}

SymmetricMemory::~SymmetricMemory() = default;

StatusOr<std::vector<SymmetricMemory>> SymmetricMemory::allocate_local_group(
    std::size_t bytes, std::span<int const> devices) {
  GCMOE_CHECK_ARG(!devices.empty(), "a group of no ranks");
  int current = 0;
  GCMOE_CHECK_CUDA(cudaGetDevice(&current));
  std::vector<std::byte*> bases;
  std::vector<std::unique_ptr<DeviceRegion>> owners;
  for (int const device : devices) {
    GCMOE_CHECK_CUDA(cudaSetDevice(device));
    auto region = allocate_zeroed(bytes);
    if (!region.ok()) {
      cudaSetDevice(current);
      return region.status();
    }
    bases.push_back(static_cast<std::byte*>(*region));
    owners.push_back(std::make_unique<DeviceRegion>(*region));
  }
  GCMOE_CHECK_CUDA(cudaSetDevice(current));
  bool const cross_device =
      std::any_of(devices.begin(), devices.end(), [&](int d) { return d != devices[0]; });
  std::vector<SymmetricMemory> group;
  for (std::size_t r = 0; r < devices.size(); ++r) {
    group.emplace_back(SymmetricMemoryKind::kLocal, bases[r], bytes, static_cast<int>(r), bases,
                       cross_device, std::move(owners[r]));
  }
  return group;
}

StatusOr<SymmetricMemory> SymmetricMemory::exchange_ipc(std::size_t bytes,
                                                        runtime::Communicator& group) {
  int device = 0;
  GCMOE_CHECK_CUDA(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  GCMOE_CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  GCMOE_ASSIGN_OR_RETURN(void* data, allocate_zeroed(bytes));
  // Owns the region and every mapping opened so far: an early return releases them.
  auto backing = std::make_unique<IpcRegion>(data);
  IpcRecord mine{};
  GCMOE_CHECK_CUDA(cudaIpcGetMemHandle(&mine.handle, data));
  mine.bytes = bytes;
  mine.pid = static_cast<std::int32_t>(getpid());
  mine.device = device;
  std::memcpy(mine.uuid, &prop.uuid, sizeof(mine.uuid));

  GCMOE_ASSIGN_OR_RETURN(std::vector<IpcRecord> const records,
                         runtime::all_gather_each(group, mine));
  int const ranks = group.world_size();
  int const me = group.rank();
  std::vector<std::byte*> peers(static_cast<std::size_t>(ranks), nullptr);
  bool cross_device = false;
  for (int r = 0; r < ranks; ++r) {
    std::size_t const at = static_cast<std::size_t>(r);
    IpcRecord const& rec = records[at];
    GCMOE_CHECK_ARG(rec.bytes == bytes,
                    "symmetric regions differ: rank {} has {} bytes, rank {} {}", r, rec.bytes, me,
                    bytes);
    if (r == me) {
      peers[at] = static_cast<std::byte*>(data);
      continue;
    }
    cross_device = cross_device || std::memcmp(rec.uuid, mine.uuid, sizeof(mine.uuid)) != 0;
    void* mapped = nullptr;
    cudaError_t const open =
        cudaIpcOpenMemHandle(&mapped, rec.handle, cudaIpcMemLazyEnablePeerAccess);
    if (open != cudaSuccess) {
      return Status(StatusCode::kInternal,
                    "rank " + std::to_string(me) + " cannot open rank " + std::to_string(r) +
                        "'s region (pid " + std::to_string(rec.pid) + ", device " +
                        std::to_string(rec.device) + ") by CUDA IPC: " + cudaGetErrorString(open));
    }
    backing->add_opened(mapped);
    peers[at] = static_cast<std::byte*>(mapped);
  }
  SymmetricMemory memory(SymmetricMemoryKind::kCudaIpc, static_cast<std::byte*>(data), bytes, me,
                         std::move(peers), cross_device, std::move(backing));
  GCMOE_RETURN_IF_ERROR(memory.verify_peers(group));
  spdlog::info("rank {}: symmetric region of {} bytes shared by CUDA IPC with {} peer(s) {}", me,
               bytes, ranks - 1, cross_device ? "on other GPUs" : "on this GPU");
  return memory;
}

Status SymmetricMemory::verify_peers(runtime::Communicator& group) const {
  GCMOE_CHECK_ARG(group.world_size() == ranks() && group.rank() == rank_,
                  "a group of {} ranks (this one {}) for a region of rank {} of {}",
                  group.world_size(), group.rank(), rank_, ranks());
  GCMOE_CHECK_ARG(bytes_ >= sizeof(std::uint64_t), "a region of {} bytes", bytes_);
  auto const word_of = [](int r) {
    return 0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(r + 1);
  };
  std::uint64_t const mine = word_of(rank_);
  GCMOE_CHECK_CUDA(cudaMemcpy(local_, &mine, sizeof(mine), cudaMemcpyHostToDevice));
  GCMOE_CHECK_CUDA(cudaDeviceSynchronize());
  GCMOE_RETURN_IF_ERROR(group.barrier());
  Status seen;
  for (int r = 0; r < ranks() && seen.ok(); ++r) {
    std::uint64_t word = 0;
    GCMOE_CHECK_CUDA(cudaMemcpy(&word, peer(r), sizeof(word), cudaMemcpyDeviceToHost));
    if (word != word_of(r)) {
      seen = Status(StatusCode::kFailedPrecondition,
                    "rank " + std::to_string(rank_) + "'s " + std::string(to_string(kind_)) +
                        " mapping of rank " + std::to_string(r) +
                        "'s region does not reach it (read " + std::to_string(word) + ")");
    }
  }
  // Every rank reads before anyone clears its word, and clears it before anyone returns (peers
  // write into a region only after their exchange returned).
  GCMOE_RETURN_IF_ERROR(group.barrier());
  GCMOE_CHECK_CUDA(cudaMemset(local_, 0, sizeof(std::uint64_t)));
  GCMOE_CHECK_CUDA(cudaDeviceSynchronize());
  GCMOE_RETURN_IF_ERROR(group.barrier());
  return seen;
}

}  // namespace gcmoe::cuda
