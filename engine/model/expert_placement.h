#pragma once
// Which routed experts an expert-parallel rank holds. The loader asks a placement per MoE block;
// the default is contiguous (rank r of N: experts [r·E/N, (r+1)·E/N), config/expert_partition.h),
// and any owner map can be plugged in instead (load balancing, replicated hot experts later).

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "engine/common/status.h"

namespace gcmoe::model {

class ExpertPlacement {
 public:
  virtual ~ExpertPlacement() = default;
  // The experts (ascending ids) of the block `block_prefix` with `experts` routed experts that
  // rank `rank` of `ranks` loads.
  virtual StatusOr<std::vector<std::int64_t>> local_experts(std::string_view block_prefix,
                                                            std::int64_t experts,
                                                            std::int64_t ranks,
                                                            std::int64_t rank) const = 0;
};

class ContiguousPlacement final : public ExpertPlacement {
 public:
  StatusOr<std::vector<std::int64_t>> local_experts(std::string_view block_prefix,
                                                    std::int64_t experts, std::int64_t ranks,
                                                    std::int64_t rank) const override;
};

// Each expert goes to owner(expert, experts, ranks), a rank in [0, ranks).
class OwnerMapPlacement final : public ExpertPlacement {
 public:
  using OwnerFn =
      std::function<std::int64_t(std::int64_t expert, std::int64_t experts, std::int64_t ranks)>;
  explicit OwnerMapPlacement(OwnerFn owner) : owner_(std::move(owner)) {}

  StatusOr<std::vector<std::int64_t>> local_experts(std::string_view block_prefix,
                                                    std::int64_t experts, std::int64_t ranks,
                                                    std::int64_t rank) const override;

 private:
  OwnerFn owner_;
};

// Expert e on rank e mod N.
OwnerMapPlacement round_robin_placement();

}  // namespace gcmoe::model
