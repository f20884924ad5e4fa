#include "engine/scheduler/kv_block_manager.h"

#include <set>

#include "tests/support/catch.h"

namespace gcmoe::scheduler {
namespace {

KvBlockManager make(std::int32_t blocks, std::int32_t block_size) {
  StatusOr<KvBlockManager> kv = KvBlockManager::create(blocks, block_size);
  REQUIRE(kv.ok());
  return std::move(kv).value();
}

TEST_CASE("kv manager rejects non-positive geometry") {
  CHECK(KvBlockManager::create(0, 16).status().code() == StatusCode::kInvalidArgument);
  CHECK(KvBlockManager::create(8, 0).status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("blocks round token counts up") {
  KvBlockManager const kv = make(8, 16);
  CHECK(kv.blocks_for_tokens(0) == 0);
  CHECK(kv.blocks_for_tokens(1) == 1);
  CHECK(kv.blocks_for_tokens(16) == 1);
  CHECK(kv.blocks_for_tokens(17) == 2);
  CHECK(kv.blocks_for_tokens(128) == 8);
}

TEST_CASE("reservations never over-commit the cache") {
  KvBlockManager kv = make(8, 16);
  REQUIRE(kv.reserve(1, 40).ok());  // 3 blocks
  REQUIRE(kv.reserve(2, 64).ok());  // 4 blocks
  CHECK(kv.usage().reserved_blocks == 7);
  CHECK(kv.can_reserve(16));
  CHECK_FALSE(kv.can_reserve(17));
  CHECK(kv.reserve(3, 17).code() == StatusCode::kResourceExhausted);
  CHECK(kv.reserve(1, 1).code() == StatusCode::kAlreadyExists);
  CHECK(kv.reserve(4, 0).code() == StatusCode::kInvalidArgument);
  REQUIRE(kv.reserve(3, 16).ok());
  CHECK(kv.usage().reserved_blocks == 8);
  CHECK_FALSE(kv.can_reserve(1));
}

TEST_CASE("blocks are allocated lazily within the reservation and freed on release") {
  KvBlockManager kv = make(8, 16);
  REQUIRE(kv.reserve(1, 40).ok());
  CHECK(kv.usage().allocated_blocks == 0);
  REQUIRE(kv.grow_to(1, 10).ok());
  CHECK(kv.block_table(1)->size() == 1);
  REQUIRE(kv.grow_to(1, 33).ok());
  CHECK(kv.block_table(1)->size() == 3);
  REQUIRE(kv.grow_to(1, 20).ok());  // never shrinks
  CHECK(kv.block_table(1)->size() == 3);
  CHECK(kv.grow_to(1, 49).code() == StatusCode::kOutOfRange);  // 4 blocks > 3 reserved
  CHECK(kv.grow_to(9, 1).code() == StatusCode::kNotFound);

  REQUIRE(kv.reserve(2, 80).ok());
  REQUIRE(kv.grow_to(2, 80).ok());
  std::set<std::int32_t> ids;
  for (std::int32_t const b : *kv.block_table(1)) {
    ids.insert(b);
  }
  for (std::int32_t const b : *kv.block_table(2)) {
    ids.insert(b);
  }
  CHECK(ids.size() == 8);  // all distinct
  CHECK(*ids.begin() == 0);
  CHECK(*ids.rbegin() == 7);
  KvUsage const full = kv.usage();
  CHECK(full.allocated_blocks == 8);
  CHECK(full.sequences == 2);

  REQUIRE(kv.release(1).ok());
  CHECK(kv.release(1).code() == StatusCode::kNotFound);
  CHECK(kv.block_table(1).status().code() == StatusCode::kNotFound);
  KvUsage const after = kv.usage();
  CHECK(after.allocated_blocks == 5);
  CHECK(after.reserved_blocks == 5);
  CHECK(after.sequences == 1);
  REQUIRE(kv.release(2).ok());
  CHECK(kv.usage().allocated_blocks == 0);
  CHECK(kv.usage().reserved_blocks == 0);
  REQUIRE(kv.reserve(3, 128).ok());  // the whole cache is reusable
  REQUIRE(kv.grow_to(3, 128).ok());
}

}  // namespace
}  // namespace gcmoe::scheduler
