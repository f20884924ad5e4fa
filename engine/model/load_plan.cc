#include "engine/model/load_plan.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "engine/common/check.h"
#include "engine/model/weights/model_weight_spec.h"

namespace gcmoe::model {
namespace {

std::int64_t align_up(std::int64_t const value) {
  return (value + kPlacementAlign - 1) / kPlacementAlign * kPlacementAlign;
}

class Planner {
 public:
  Planner(checkpoint::Checkpoint const& checkpoint, RankSelection const& selection,
          std::int64_t const piece_bytes)
      : checkpoint_(checkpoint),
        selection_(selection),
        piece_bytes_(static_cast<std::size_t>(piece_bytes)) {}

  // A tensor placed as stored, as pieces of at most piece_bytes_: a 1.9 GB embedding is then
  // copied by every worker at once, and progress moves while it is.
  Status add_tensor(TensorSpec const& spec, bool const routed_expert) {
    GCMOE_ASSIGN_OR_RETURN(checkpoint::TensorView const view, checkpoint_.tensor(spec.name));
    LoadItem const whole = located(spec.name, view.bytes.size(), routed_expert);
    plan_.tensors.emplace(spec.name, whole.destination);
    std::size_t const size = view.bytes.size();
    std::size_t at = 0;
    do {
      std::size_t const piece = std::min(piece_bytes_, size - at);
      LoadItem item = whole;
      item.work = CopyWork{{view.name, view.dtype, view.shape, view.bytes.subspan(at, piece)}};
      item.destination = {whole.destination.offset + static_cast<std::int64_t>(at),
                          static_cast<std::int64_t>(piece)};
      item.source_bytes = static_cast<std::int64_t>(piece);
      item.file_offset += at;
      at += piece;
      item.tensors = at == size ? 1 : 0;  // counted once, with its last piece
      push(std::move(item));
    } while (at < size);
    return Status();
  }

  Status add_block(BlockSpec const& block) {
    Status status;
    for_each_replicated(block, [&](TensorSpec const& tensor) {
      if (status.ok()) {
        status = add_tensor(tensor, false);
      }
    });
    GCMOE_RETURN_IF_ERROR(status);
    if (block.moe) {
      GCMOE_RETURN_IF_ERROR(add_experts(*block.moe));
    }
    return Status();
  }

  LoadPlan take() {
    std::sort(plan_.items.begin(), plan_.items.end(), [](LoadItem const& a, LoadItem const& b) {
      return std::tie(a.shard, a.file_offset) < std::tie(b.shard, b.file_offset);
    });
    return std::move(plan_);
  }

 private:
  Status add_experts(MoeSpec const& moe) {
    auto const experts = static_cast<std::int64_t>(moe.experts.size());
    ContiguousPlacement const contiguous;
    ExpertPlacement const& placement =
        selection_.placement != nullptr ? *selection_.placement : contiguous;
    LocalExpertBlock local{moe.prefix, experts, {}, {}};
    GCMOE_ASSIGN_OR_RETURN(
        local.experts,
        placement.local_experts(moe.prefix, experts, selection_.ranks, selection_.rank));
    for (std::int64_t const e : local.experts) {
      GCMOE_CHECK_ARG(e >= 0 && e < experts, "{}: placement gave expert {} of {}", moe.prefix, e,
                      experts);
      SwigluSpec const& expert = moe.experts[static_cast<std::size_t>(e)];
      if (selection_.transform == nullptr) {
        Status status;
        for_each_tensor(expert, [&](TensorSpec const& tensor) {
          if (status.ok()) {
            status = add_tensor(tensor, true);
          }
        });
        GCMOE_RETURN_IF_ERROR(status);
      } else {
        GCMOE_ASSIGN_OR_RETURN(WeightPlacement const packed, add_packed(expert));
        local.packed.push_back(packed);
      }
      ++plan_.experts;
    }
    plan_.expert_blocks.push_back(std::move(local));
    return Status();
  }

  StatusOr<WeightPlacement> add_packed(SwigluSpec const& expert) {
    ExpertWork work{&expert, {}};
    std::int64_t source_bytes = 0;
    auto const view = [&](LinearSpec const& linear, checkpoint::TensorView& weight,
                          checkpoint::TensorView& scale) -> Status {
      GCMOE_ASSIGN_OR_RETURN(weight, checkpoint_.tensor(linear.weight.name));
      source_bytes += static_cast<std::int64_t>(weight.bytes.size());
      if (linear.scale) {
        GCMOE_ASSIGN_OR_RETURN(scale, checkpoint_.tensor(linear.scale->name));
        source_bytes += static_cast<std::int64_t>(scale.bytes.size());
      }
      return Status();
    };
    ExpertTensorViews& v = work.source;
    GCMOE_RETURN_IF_ERROR(view(expert.gate, v.gate, v.gate_scale));
    GCMOE_RETURN_IF_ERROR(view(expert.up, v.up, v.up_scale));
    GCMOE_RETURN_IF_ERROR(view(expert.down, v.down, v.down_scale));
    GCMOE_ASSIGN_OR_RETURN(std::int64_t const packed, selection_.transform->packed_bytes(expert));
    LoadItem item = located(expert.gate.weight.name, static_cast<std::size_t>(packed), true);
    item.source_bytes = source_bytes;
    item.tensors =
        (expert.gate.scale ? 2 : 1) + (expert.up.scale ? 2 : 1) + (expert.down.scale ? 2 : 1);
    item.work = std::move(work);
    WeightPlacement const placement = item.destination;
    push(std::move(item));
    return placement;
  }

  // An item reading `name`'s shard position with `stored` destination bytes.
  LoadItem located(std::string const& name, std::size_t const stored, bool const routed_expert) {
    auto const location = checkpoint_.layout().find(name);
    LoadItem item;
    item.destination = {plan_.store_bytes, static_cast<std::int64_t>(stored)};
    plan_.store_bytes = align_up(plan_.store_bytes + static_cast<std::int64_t>(stored));
    item.source_bytes = static_cast<std::int64_t>(stored);
    item.tensors = 1;
    item.routed_expert = routed_expert;
    if (location.ok()) {  // always: check_spec found every name first
      item.shard = location->shard;
      item.file_offset = location->tensor->begin;
    }
    return item;
  }

  void push(LoadItem item) {
    plan_.tensor_count += item.tensors;
    plan_.source_bytes += item.source_bytes;
    (item.routed_expert ? plan_.expert_source_bytes : plan_.replicated_bytes) += item.source_bytes;
    plan_.items.push_back(std::move(item));
  }

  checkpoint::Checkpoint const& checkpoint_;
  RankSelection const& selection_;
  std::size_t piece_bytes_;
  LoadPlan plan_;
};

}  // namespace

StatusOr<LoadPlan> plan_load(checkpoint::Checkpoint const& checkpoint, ModelSpec const& spec,
                             RankSelection const& selection, std::int64_t const piece_bytes) {
  GCMOE_CHECK_ARG(piece_bytes > 0, "copy pieces of {} bytes", piece_bytes);
  GCMOE_RETURN_IF_ERROR(check_spec(checkpoint.layout(), spec, selection.with_mtp));
  Planner planner(checkpoint, selection, piece_bytes);
  for (TensorSpec const* top : {&spec.embed, &spec.final_norm, &spec.lm_head}) {
    GCMOE_RETURN_IF_ERROR(planner.add_tensor(*top, false));
  }
  for (auto const& [slot, tensor] : spec.top_extra.tensors) {
    GCMOE_RETURN_IF_ERROR(planner.add_tensor(tensor, false));
  }
  for (auto const& [slot, linear] : spec.top_extra.linears) {
    GCMOE_RETURN_IF_ERROR(planner.add_tensor(linear.weight, false));
    if (linear.scale) {
      GCMOE_RETURN_IF_ERROR(planner.add_tensor(*linear.scale, false));
    }
  }
  for (BlockSpec const& block : spec.layers) {
    GCMOE_RETURN_IF_ERROR(planner.add_block(block));
  }
  if (selection.with_mtp) {
    for (BlockSpec const& block : spec.mtp) {
      GCMOE_RETURN_IF_ERROR(planner.add_block(block));
    }
  }
  return planner.take();
}

}  // namespace gcmoe::model
