#include "engine/scheduler/kv_block_manager.h"

#include <fmt/format.h>

#include "engine/common/check.h"

namespace gcmoe::scheduler {

StatusOr<KvBlockManager> KvBlockManager::create(std::int32_t total_blocks,
                                                std::int32_t block_size) {
  GCMOE_CHECK_ARG(total_blocks > 0, "kv total_blocks must be > 0, got {}", total_blocks);
  GCMOE_CHECK_ARG(block_size > 0, "kv block_size must be > 0, got {}", block_size);
  return KvBlockManager(total_blocks, block_size);
}

KvBlockManager::KvBlockManager(std::int32_t total_blocks, std::int32_t block_size)
    : total_blocks_(total_blocks), block_size_(block_size) {
  free_blocks_.reserve(static_cast<std::size_t>(total_blocks));
  for (std::int32_t block = total_blocks - 1; block >= 0; --block) {
    free_blocks_.push_back(block);
  }
}

std::int64_t KvBlockManager::blocks_for_tokens(std::int64_t tokens) const {
  return tokens <= 0 ? 0 : (tokens + block_size_ - 1) / block_size_;
}

bool KvBlockManager::can_reserve(std::int64_t tokens) const {
  return blocks_for_tokens(tokens) <= total_blocks_ - reserved_blocks_;
}

Status KvBlockManager::reserve(SequenceId id, std::int64_t tokens) {
  GCMOE_CHECK_ARG(tokens > 0, "kv reservation of {} tokens for sequence {}", tokens, id);
  if (sequences_.contains(id)) {
    return {StatusCode::kAlreadyExists, fmt::format("sequence {} already holds KV blocks", id)};
  }
  if (!can_reserve(tokens)) {
    return resource_exhausted_error(fmt::format("sequence {} needs {} KV blocks, {} of {} are free",
                                                id, blocks_for_tokens(tokens),
                                                total_blocks_ - reserved_blocks_, total_blocks_));
  }
  auto const blocks = static_cast<std::int32_t>(blocks_for_tokens(tokens));
  sequences_.emplace(id, Reservation{blocks, {}});
  reserved_blocks_ += blocks;
  return Status();
}

Status KvBlockManager::grow_to(SequenceId id, std::int64_t tokens) {
  auto const it = sequences_.find(id);
  if (it == sequences_.end()) {
    return not_found_error(fmt::format("sequence {} holds no KV blocks", id));
  }
  Reservation& r = it->second;
  std::int64_t const needed = blocks_for_tokens(tokens);
  if (needed > r.reserved_blocks) {
    return out_of_range_error(
        fmt::format("sequence {} grows to {} tokens ({} blocks) past its {} "
                    "reserved blocks",
                    id, tokens, needed, r.reserved_blocks));
  }
  while (static_cast<std::int64_t>(r.table.size()) < needed) {
    // Cannot run dry: the sum of reservations never exceeds the cache.
    GCMOE_CHECK_INTERNAL(!free_blocks_.empty(), "KV free list empty within a reservation");
    r.table.push_back(free_blocks_.back());
    free_blocks_.pop_back();
  }
  return Status();
}

StatusOr<std::span<std::int32_t const>> KvBlockManager::block_table(SequenceId id) const {
  auto const it = sequences_.find(id);
  if (it == sequences_.end()) {
    return not_found_error(fmt::format("sequence {} holds no KV blocks", id));
  }
  return std::span<std::int32_t const>(it->second.table);
}

Status KvBlockManager::release(SequenceId id) {
  auto const it = sequences_.find(id);
  if (it == sequences_.end()) {
    return not_found_error(fmt::format("sequence {} holds no KV blocks", id));
  }
  // Return in reverse so a release-then-reserve cycle reuses the same ids (cache-friendly).
  for (auto block = it->second.table.rbegin(); block != it->second.table.rend(); ++block) {
    free_blocks_.push_back(*block);
  }
  reserved_blocks_ -= it->second.reserved_blocks;
  sequences_.erase(it);
  return Status();
}

KvUsage KvBlockManager::usage() const {
  return {block_size_, total_blocks_, reserved_blocks_,
          total_blocks_ - static_cast<std::int32_t>(free_blocks_.size()),
          static_cast<std::int32_t>(sequences_.size())};
}

}  // namespace gcmoe::scheduler
