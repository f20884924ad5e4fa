#pragma once
// The rank processes the front-end currently talks to: one generation of the group (the
// supervisor starts a new one after a fault) with a RankService stub per rank and the model they
// loaded. The slot holds the live group, or none while the group is (re)starting. Thread-safe.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gcmoe/internal/v1/rank.grpc.pb.h"

namespace gcmoe::frontend {

struct ModelDescription {
  std::string family;
  std::string model_path;
  std::uint32_t vocab_size = 0;
  std::uint32_t max_context_tokens = 0;
  std::vector<std::uint32_t> eos_token_ids;
  // From the checkpoint's config.json (0 when it has none the front-end can read).
  std::uint32_t num_layers = 0;
  std::uint32_t num_routed_experts = 0;
  std::uint32_t experts_per_token = 0;
};

struct RankGroup {
  std::uint64_t generation = 0;
  std::vector<std::unique_ptr<internal::v1::RankService::Stub>> ranks;
  ModelDescription model;
};

class RankGroupSlot {
 public:
  void set(std::shared_ptr<RankGroup const> group) {
    std::lock_guard<std::mutex> const lock(mutex_);
    group_ = std::move(group);
  }
  std::shared_ptr<RankGroup const> get() const {
    std::lock_guard<std::mutex> const lock(mutex_);
    return group_;
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<RankGroup const> group_;
};

}  // namespace gcmoe::frontend
