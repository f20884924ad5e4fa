#pragma once
// Loads one expert-parallel rank's weights from an opened checkpoint into a WeightStore: the
// replicated tensors plus the routed experts its placement gives it, streamed by a pool of
// workers straight from the shard mappings to the destination (host memory, or device memory
// through bounded pinned staging), never through a host copy of the checkpoint. Routed experts
// go through the layout transform when one is set. Logs progress about every second and a
// summary (bytes, bytes per rank, GB/s, seconds).

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/checkpoint/checkpoint.h"
#include "engine/common/status.h"
#include "engine/model/load_plan.h"
#include "engine/model/weight_store.h"

namespace gcmoe::model {

struct LoadOptions {
  RankSelection selection;
  int workers = 0;  // 0: one per hardware thread, at most kMaxWorkers
  std::int64_t copy_piece_bytes = kDefaultCopyPieceBytes;
  std::chrono::milliseconds progress_interval{1000};
};

inline constexpr int kMaxWorkers = 16;

struct LoadStats {
  std::int64_t ranks = 1;
  std::int64_t rank = 0;
  std::int64_t tensors = 0;
  std::int64_t source_bytes = 0;  // read from the checkpoint
  std::int64_t stored_bytes = 0;  // size of the store (packed experts, alignment padding)
  std::int64_t expert_bytes = 0;  // routed experts, as read
  std::int64_t replicated_bytes = 0;
  std::int64_t experts = 0;  // routed experts over all blocks
  int workers = 0;
  double allocate_seconds = 0.0;  // store allocation (device memory, pinned staging)
  double seconds = 0.0;           // streaming: first read to last byte at the destination

  double gb_per_s() const;  // source bytes per streaming second, 1 GB = 1e9 B
};

class LoadedWeights {
 public:
  LoadedWeights(std::unique_ptr<WeightStore> store, LoadPlan plan, LoadStats stats);

  WeightStore const& store() const { return *store_; }
  LoadStats const& stats() const { return stats_; }
  std::vector<LocalExpertBlock> const& expert_blocks() const { return expert_blocks_; }

  // Where a tensor placed as stored lives; NOT_FOUND for tensors not loaded on this rank (other
  // ranks' experts, MTP when skipped, experts that were packed).
  StatusOr<WeightPlacement> find(std::string_view name) const;
  // The bytes of a placement in a host store (FAILED_PRECONDITION for a device store).
  StatusOr<std::span<std::byte const>> host_bytes(WeightPlacement placement) const;

 private:
  std::unique_ptr<WeightStore> store_;
  std::unordered_map<std::string, WeightPlacement> tensors_;
  std::vector<LocalExpertBlock> expert_blocks_;
  LoadStats stats_;
};

StatusOr<LoadedWeights> load_weights(checkpoint::Checkpoint const& checkpoint,
                                     ModelSpec const& spec, LoadOptions const& options,
                                     std::unique_ptr<WeightStore> store);

}  // namespace gcmoe::model
