#pragma once
// What one rank loads and where it lands, decided before any byte moves: the replicated tensors,
// the routed experts its placement gives it (whole experts, packed by the layout transform when
// one is set), their destination offsets in one contiguous store, and the order to read them in
// (shard by shard, front to back, so page-in is sequential).

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "engine/checkpoint/checkpoint.h"
#include "engine/common/status.h"
#include "engine/model/expert_layout_transform.h"
#include "engine/model/expert_placement.h"
#include "engine/model/weights/weight_spec.h"

namespace gcmoe::model {

// Destination offsets are multiples of this (bytes): 16-byte vector loads and 256-byte
// transactions for every tensor.
inline constexpr std::int64_t kPlacementAlign = 256;

struct WeightPlacement {
  std::int64_t offset = 0;  // bytes from the start of the store
  std::int64_t bytes = 0;
};

// The routed experts of one MoE block that this rank holds.
struct LocalExpertBlock {
  std::string prefix;  // MoeSpec::prefix
  std::int64_t experts_in_block = 0;
  std::vector<std::int64_t> experts;    // ids, ascending
  std::vector<WeightPlacement> packed;  // per local expert when transformed; else empty (the
                                        // expert's tensors are placed by name)
};

struct CopyWork {
  checkpoint::TensorView source;
};
struct ExpertWork {
  SwigluSpec const* spec = nullptr;  // points into the ModelSpec given to plan_load
  ExpertTensorViews source;
};

// One unit of a worker's work: a whole routed expert through the transform, or a piece of a
// tensor placed as stored (tensors over the piece size are split so that all workers share a
// large embedding and progress moves while it loads).
struct LoadItem {
  std::variant<CopyWork, ExpertWork> work;
  WeightPlacement destination;
  std::int64_t source_bytes = 0;  // read from the checkpoint
  std::int64_t tensors = 0;       // checkpoint tensors it completes
  bool routed_expert = false;
  std::size_t shard = 0;  // read order: shard, then file offset
  std::uint64_t file_offset = 0;
};

struct RankSelection {
  std::int64_t ranks = 1;
  std::int64_t rank = 0;
  bool with_mtp = false;                             // load MTP / DSpark stages too
  ExpertPlacement const* placement = nullptr;        // nullptr: contiguous E/N
  ExpertLayoutTransform const* transform = nullptr;  // nullptr: experts as stored
};

struct LoadPlan {
  std::vector<LoadItem> items;                               // in read order
  std::unordered_map<std::string, WeightPlacement> tensors;  // every tensor placed as stored
  std::vector<LocalExpertBlock> expert_blocks;
  std::int64_t store_bytes = 0;
  std::int64_t tensor_count = 0;
  std::int64_t source_bytes = 0;
  std::int64_t expert_source_bytes = 0;
  std::int64_t replicated_bytes = 0;
  std::int64_t experts = 0;  // routed experts over all blocks
};

// Largest piece of a tensor one worker copies in one go: 64 MiB keeps 16 workers busy on one
// 1.9 GB embedding and costs ~1.5 k items per 100 GB.
inline constexpr std::int64_t kDefaultCopyPieceBytes = 64LL << 20;

// Checks the spec's tensors that will load against the checkpoint (check_spec) first, so a
// missing or mis-shaped tensor fails before any allocation.
StatusOr<LoadPlan> plan_load(checkpoint::Checkpoint const& checkpoint, ModelSpec const& spec,
                             RankSelection const& selection,
                             std::int64_t piece_bytes = kDefaultCopyPieceBytes);

}  // namespace gcmoe::model
