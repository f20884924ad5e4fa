#include "kernels/moe/align_sort_ref.h"

#include <cstdint>
#include <vector>

#include "tests/support/catch.h"

namespace gcmoe::kernels {
namespace {

using Ids = std::vector<std::int32_t>;

TEST_CASE("align & sort reference: hand-checked 3 tokens x top-2 over 4 experts, block 4") {
  // Flat pairs: 0->e1 1->e0 2->e1 3->e3 4->e2 5->e1. Counts 1,3,1,1; each pads to 4.
  Ids const ids = {1, 0, 1, 3, 2, 1};
  AlignSortShape const shape{.num_tokens = 3, .top_k = 2, .num_experts = 4, .block_size = 4};
  CHECK(shape.capacity() == 20);  // round_up(6 + 4 * 3, 4)
  CHECK(shape.max_blocks() == 5);
  auto const result = align_sort_ref(ids, shape);
  REQUIRE(result.ok());
  CHECK(result->total_padded == 16);
  CHECK(result->expert_offsets == Ids{0, 4, 8, 12, 16});
  CHECK(result->sorted_ids == Ids{1, 6, 6, 6, 0, 2, 5, 6, 4, 6, 6, 6, 3, 6, 6, 6, 6, 6, 6, 6});
  CHECK(result->block_experts == Ids{0, 1, 2, 3, -1});
}

TEST_CASE("align & sort reference: empty experts, invalid ids, a segment of two blocks") {
  // 5 tokens x top-1 over 3 experts, block 2: e2 gets 3 pairs (two blocks), e1 none, -1 and 3
  // are not routed here.
  Ids const ids = {2, -1, 2, 3, 2};
  AlignSortShape const shape{.num_tokens = 5, .top_k = 1, .num_experts = 3, .block_size = 2};
  CHECK(shape.capacity() == 8);  // round_up(5 + 3 * 1, 2)
  auto const result = align_sort_ref(ids, shape);
  REQUIRE(result.ok());
  CHECK(result->total_padded == 4);
  CHECK(result->expert_offsets == Ids{0, 0, 0, 4});
  CHECK(result->sorted_ids == Ids{0, 2, 4, 5, 5, 5, 5, 5});
  CHECK(result->block_experts == Ids{2, 2, -1, -1});
}

TEST_CASE("align & sort reference: skew keeps flat-index order inside the expert") {
  Ids const ids = {0, 0, 0, 0, 0, 0};
  AlignSortShape const shape{.num_tokens = 2, .top_k = 3, .num_experts = 8, .block_size = 16};
  auto const result = align_sort_ref(ids, shape);
  REQUIRE(result.ok());
  CHECK(result->total_padded == 16);
  CHECK(shape.capacity() == 96);  // round_up(6 + 6 * 15, 16)
  Ids expected(96, 6);
  for (std::int32_t i = 0; i < 6; ++i) {
    expected[static_cast<std::size_t>(i)] = i;
  }
  CHECK(result->sorted_ids == expected);
  CHECK(result->block_experts == Ids{0, -1, -1, -1, -1, -1});
  CHECK(result->expert_offsets == Ids{0, 16, 16, 16, 16, 16, 16, 16, 16});
}

TEST_CASE("align & sort reference: no tokens") {
  AlignSortShape const shape{.num_tokens = 0, .top_k = 8, .num_experts = 256, .block_size = 64};
  auto const result = align_sort_ref({}, shape);
  REQUIRE(result.ok());
  CHECK(result->total_padded == 0);
  CHECK(result->sorted_ids.empty());
  CHECK(result->block_experts.empty());
  CHECK(result->expert_offsets == Ids(257, 0));
}

TEST_CASE("align & sort reference rejects bad shapes and sizes") {
  Ids const ids = {0, 1};
  auto const bad = [&](AlignSortShape const& shape) {
    return align_sort_ref(ids, shape).status().code() == StatusCode::kInvalidArgument;
  };
  CHECK(bad({.num_tokens = 2, .top_k = 1, .num_experts = 0, .block_size = 16}));
  CHECK(bad({.num_tokens = 2, .top_k = 1, .num_experts = 1025, .block_size = 16}));
  CHECK(bad({.num_tokens = 2, .top_k = 1, .num_experts = 4, .block_size = 0}));
  CHECK(bad({.num_tokens = 2, .top_k = 0, .num_experts = 4, .block_size = 16}));
  CHECK(bad({.num_tokens = 1, .top_k = 1, .num_experts = 4, .block_size = 16}));  // 2 ids for 1
  CHECK(bad({.num_tokens = 1 << 30, .top_k = 8, .num_experts = 4, .block_size = 16}));
}

}  // namespace
}  // namespace gcmoe::kernels
