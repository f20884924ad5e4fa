#include "kernels/moe/moe_combine_ref.h"

#include <vector>

#include "tests/support/catch.h"

namespace gcmoe::kernels {
namespace {

TEST_CASE("combine sums weighted slots plus the shared expert, rounded to bf16") {
  CombineShape const shape{2, 2, 2};
  // token 0: slots (1, 2) and (3, 4); token 1: slots (5, 6) and (7, 8)
  std::vector<float> const slots = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<float> const weights = {0.5f, 0.25f, 1.0f, 2.0f};
  std::vector<float> const shared = {10, 20, 30, 40};
  std::vector<float> out(4);
  REQUIRE(moe_combine_ref(shape, slots, weights, true, shared, out).ok());
  CHECK(out[0] == 0.5f * 1 + 0.25f * 3 + 10);
  CHECK(out[1] == 0.5f * 2 + 0.25f * 4 + 20);
  CHECK(out[2] == 5 + 2 * 7 + 30);
  CHECK(out[3] == 6 + 2 * 8 + 40);

  REQUIRE(moe_combine_ref(shape, slots, weights, false, {}, out).ok());
  CHECK(out[0] == 4.0f);
  CHECK(out[3] == 14.0f);
}

TEST_CASE("combine output is bf16: 1 + 2^-10 rounds to 1") {
  CombineShape const shape{1, 1, 1};
  std::vector<float> const slots = {1.0f + 1.0f / 1024.0f};
  std::vector<float> out(1);
  REQUIRE(moe_combine_ref(shape, slots, {}, false, {}, out).ok());
  CHECK(out[0] == 1.0f);
  // ... unless the caller asks for the fp32 sum (the golden test against transformers' fp32).
  REQUIRE(moe_combine_ref(shape, slots, {}, false, {}, out, /*round_to_bf16=*/false).ok());
  CHECK(out[0] == 1.0f + 1.0f / 1024.0f);
}

TEST_CASE("combine rejects mismatched sizes") {
  std::vector<float> const slots(8);
  std::vector<float> out(4);
  std::vector<float> const short_weights(3);
  CHECK(moe_combine_ref({2, 2, 2}, slots, short_weights, true, {}, out).code() ==
        StatusCode::kInvalidArgument);
  std::vector<float> const short_shared(3);
  CHECK(moe_combine_ref({2, 2, 2}, slots, {}, false, short_shared, out).code() ==
        StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gcmoe::kernels
