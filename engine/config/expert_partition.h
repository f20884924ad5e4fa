#pragma once
// Default expert-parallel placement: rank r of N owns the contiguous experts
// [r·E/N, (r+1)·E/N) of every MoE layer; everything else is replicated on every rank.

#include <cstdint>

#include "engine/common/status.h"

namespace gcmoe::config {

struct ExpertRange {
  std::int64_t begin = 0;
  std::int64_t end = 0;  // exclusive
  std::int64_t count() const { return end - begin; }
};

// INVALID_ARGUMENT unless 0 <= rank < ranks and `ranks` divides `experts`.
StatusOr<ExpertRange> experts_of_rank(std::int64_t experts, std::int64_t ranks, std::int64_t rank);

}  // namespace gcmoe::config
