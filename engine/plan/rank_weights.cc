#include "engine/plan/rank_weights.h"

#include <string_view>

#include "engine/common/check.h"
#include "engine/config/expert_partition.h"

namespace gcmoe::plan {
namespace {

bool host_resident(model::TensorSpec const& tensor) {
  return tensor.name.find("engram.embed") != std::string::npos;
}

Status add_block(model::BlockSpec const& block, std::int64_t ranks, std::int64_t rank,
                 RankWeights& weights) {
  model::for_each_replicated(block, [&](model::TensorSpec const& tensor) {
    (host_resident(tensor) ? weights.host_bytes : weights.replicated_bytes) += tensor.bytes();
  });
  if (!block.moe) {
    return Status();
  }
  auto const experts = static_cast<std::int64_t>(block.moe->experts.size());
  GCMOE_ASSIGN_OR_RETURN(config::ExpertRange const range,
                         config::experts_of_rank(experts, ranks, rank));
  weights.experts_per_layer = range.count();
  for (std::int64_t e = range.begin; e < range.end; ++e) {
    model::for_each_tensor(
        block.moe->experts[static_cast<std::size_t>(e)],
        [&](model::TensorSpec const& tensor) { weights.routed_expert_bytes += tensor.bytes(); });
  }
  return Status();
}

}  // namespace

StatusOr<RankWeights> rank_weights(model::ModelSpec const& spec, std::int64_t ranks,
                                   std::int64_t rank, bool with_mtp) {
  GCMOE_CHECK_ARG(ranks >= 1 && rank >= 0 && rank < ranks, "rank {} of {} is out of range", rank,
                  ranks);
  RankWeights weights;
  weights.replicated_bytes += spec.embed.bytes() + spec.final_norm.bytes();
  if (spec.lm_head.name != spec.embed.name) {  // tied embeddings are held once
    weights.replicated_bytes += spec.lm_head.bytes();
  }
  for (auto const& [slot, linear] : spec.top_extra.linears) {
    weights.replicated_bytes += linear.bytes();
  }
  for (auto const& [slot, tensor] : spec.top_extra.tensors) {
    weights.replicated_bytes += tensor.bytes();
  }
  for (model::BlockSpec const& block : spec.layers) {
    GCMOE_RETURN_IF_ERROR(add_block(block, ranks, rank, weights));
  }
  if (with_mtp) {
    for (model::BlockSpec const& block : spec.mtp) {
      GCMOE_RETURN_IF_ERROR(add_block(block, ranks, rank, weights));
    }
  }
  return weights;
}

}  // namespace gcmoe::plan
