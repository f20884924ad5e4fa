#pragma once
// What a checkpoint holds, from its safetensors headers alone: the routed experts of every MoE
// block (found by the `<prefix>.experts.<e>.` naming all three families share), the bytes each
// expert takes, and the replicated rest. Answers "how many bytes does rank r of N load" for the
// default contiguous expert placement.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/checkpoint/checkpoint_layout.h"
#include "engine/common/status.h"

namespace gcmoe::checkpoint {

struct ExpertBlock {
  std::string prefix;                      // "layers.3.ffn", "model.layers.3.mlp", "mtp.0.ffn"
  std::vector<std::int64_t> expert_bytes;  // bytes of expert e, weights and scales together
};

struct CheckpointInventory {
  std::vector<ExpertBlock> blocks;  // in layer order
  std::int64_t routed_expert_bytes = 0;
  std::int64_t replicated_bytes = 0;
  std::int64_t tensor_count = 0;
  std::map<std::string, std::int64_t> bytes_by_dtype;         // every tensor
  std::map<std::string, std::int64_t> expert_bytes_by_dtype;  // routed experts only

  std::int64_t total_bytes() const { return routed_expert_bytes + replicated_bytes; }
  // Replicated bytes plus experts [r·E/N, (r+1)·E/N) of every block; an error when some block's
  // expert count does not divide by `ranks`.
  StatusOr<std::int64_t> rank_bytes(std::int64_t ranks, std::int64_t rank) const;
};

// INVALID_ARGUMENT when a block's expert indices are not 0..E-1 without gaps.
StatusOr<CheckpointInventory> take_inventory(CheckpointLayout const& layout);

}  // namespace gcmoe::checkpoint
