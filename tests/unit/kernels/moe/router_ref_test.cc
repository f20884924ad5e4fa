#include "kernels/moe/router_ref.h"

#include <cstdint>
#include <vector>

#include "tests/support/catch.h"

namespace gcmoe::kernels {
namespace {

using Catch::Detail::Approx;
using Ids = std::vector<std::int32_t>;

TEST_CASE("router reference, GLM-5.2: the bias moves the selection, not the weights") {
  // logits = x . w_e = 0, 2, -1, 1; sigmoid 0.5, 0.881, 0.269, 0.731; bias 0, -1, 0.5, 0
  // -> selection 0.5, -0.119, 0.769, 0.731: experts 2 then 3 (expert 1 has the top score but not
  // the top selection). Weights from the unbiased scores: 0.269 / 1.0 and 0.731 / 1.0, x2.5.
  std::vector<float> const x = {1.0f, 0.0f};
  std::vector<float> const gate = {0.0f, 0.0f, 2.0f, 0.0f, -1.0f, 0.0f, 1.0f, 0.0f};
  std::vector<float> const bias = {0.0f, -1.0f, 0.5f, 0.0f};
  RouterShape const shape{.num_tokens = 1, .hidden = 2, .num_experts = 4, .top_k = 2};
  auto const r =
      router_ref({.x = x, .gate_weight = gate, .bias = bias}, shape, glm5_router_params());
  REQUIRE(r.ok());
  CHECK(r->topk_ids == Ids{2, 3});
  CHECK(r->topk_weights[0] == Approx(0.6723535534).epsilon(1e-6));
  CHECK(r->topk_weights[1] == Approx(1.8276464466).epsilon(1e-6));
}

TEST_CASE("router reference, DeepSeek: sqrt(softplus) with torch's threshold, x1.5") {
  // logits 0, 25, -3 -> sqrt(log 2) = 0.8326, sqrt(25) = 5 (softplus(x) = x above 20),
  // sqrt(log1p(e^-3)) = 0.2204. Top-2: 1 then 0.
  std::vector<float> const x = {1.0f};
  std::vector<float> const gate = {0.0f, 25.0f, -3.0f};
  RouterShape const shape{.num_tokens = 1, .hidden = 1, .num_experts = 3, .top_k = 2};
  auto const r = router_ref({.x = x, .gate_weight = gate}, shape, deepseek_v4_router_params());
  REQUIRE(r.ok());
  CHECK(r->topk_ids == Ids{1, 0});
  CHECK(r->topk_weights[0] == Approx(1.2858859454).epsilon(1e-6));
  CHECK(r->topk_weights[1] == Approx(0.2141140546).epsilon(1e-6));
  CHECK(router_score(RouterScore::kSqrtSoftplus, -3.0f) == Approx(0.2204253878).epsilon(1e-6));
}

TEST_CASE("router reference, DeepSeek-V4 hash layer: experts from the token id, table order") {
  std::vector<float> const x = {1.0f, 1.0f};  // two tokens, hidden 1
  std::vector<float> const gate = {0.0f, 25.0f, -3.0f};
  std::vector<std::int32_t> const token_ids = {1, 0};
  std::vector<std::int32_t> const table = {2, 0, 1, 2};  // vocab 2 x top-2
  RouterShape const shape{.num_tokens = 2, .hidden = 1, .num_experts = 3, .top_k = 2};
  auto const r =
      router_ref({.x = x, .gate_weight = gate, .token_ids = token_ids, .hash_table = table}, shape,
                 deepseek_v4_router_params());
  REQUIRE(r.ok());
  CHECK(r->topk_ids == Ids{1, 2, 2, 0});
  CHECK(r->topk_weights[0] == Approx(1.4366645327).epsilon(1e-6));
  CHECK(r->topk_weights[1] == Approx(0.0633354673).epsilon(1e-6));
  CHECK(r->topk_weights[2] == Approx(0.3140022432).epsilon(1e-6));
  CHECK(r->topk_weights[3] == Approx(1.1859977568).epsilon(1e-6));
}

TEST_CASE("router reference, DeepSeek-V4.1: gate_temp divides the logits before scoring") {
  // gate_temp 2: logits 0, 25, -3 become 0, 12.5, -1.5 -> sqrt(softplus) 0.83255, 3.53553,
  // 0.44879. Top-2: 1 then 0, weights 3.53553 / 4.36809 and 0.83255 / 4.36809, x1.5.
  std::vector<float> const x = {1.0f};
  std::vector<float> const gate = {0.0f, 25.0f, -3.0f};
  RouterShape const shape{.num_tokens = 1, .hidden = 1, .num_experts = 3, .top_k = 2};
  RouterParams params = deepseek_v41_router_params();
  CHECK(params.gate_temperature == 1.0f);  // the release config has no gate_temp
  params.gate_temperature = 2.0f;
  auto const r = router_ref({.x = x, .gate_weight = gate}, shape, params);
  REQUIRE(r.ok());
  CHECK(r->topk_ids == Ids{1, 0});
  CHECK(r->topk_weights[0] == Approx(1.2141010854).epsilon(1e-6));
  CHECK(r->topk_weights[1] == Approx(0.2858989146).epsilon(1e-6));
  params.gate_temperature = 0.0f;
  CHECK(router_ref({.x = x, .gate_weight = gate}, shape, params).status().code() ==
        StatusCode::kInvalidArgument);
}

TEST_CASE("router reference, DeepSeek-V4.1: image-span tokens select with bias_vl") {
  // Two tokens with the same logits 0, 2, -1, 1 (sigmoid scores for easy numbers); token 1 is
  // an image token. bias favours expert 0, bias_vl expert 2; weights stay unbiased.
  std::vector<float> const x = {1.0f, 1.0f};  // hidden 1
  std::vector<float> const gate = {0.0f, 2.0f, -1.0f, 1.0f};
  std::vector<float> const bias = {1.0f, 0.0f, 0.0f, 0.0f};
  std::vector<float> const bias_vl = {0.0f, 0.0f, 1.0f, 0.0f};
  std::vector<std::uint8_t> const image_mask = {0, 1};
  RouterShape const shape{.num_tokens = 2, .hidden = 1, .num_experts = 4, .top_k = 2};
  RouterParams params = glm5_router_params();
  params.routed_scaling = 1.0f;
  RouterRefInputs const in{
      .x = x, .gate_weight = gate, .bias = bias, .bias_vl = bias_vl, .image_mask = image_mask};
  auto const r = router_ref(in, shape, params);
  REQUIRE(r.ok());
  // token 0: selection 1.5, 0.881, 0.269, 0.731 -> 0, 1; token 1: 0.5, 0.881, 1.269, 0.731 -> 2, 1
  CHECK(r->topk_ids == Ids{0, 1, 2, 1});
  CHECK(r->topk_weights[0] == Approx(0.5 / (0.5 + 0.8807970780)).epsilon(1e-6));
  CHECK(r->topk_weights[2] == Approx(0.2689414214 / (0.2689414214 + 0.8807970780)).epsilon(1e-6));
  RouterRefInputs no_vl = in;
  no_vl.bias_vl = {};
  CHECK(router_ref(no_vl, shape, params).status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("router reference: equal selection scores go to the lower expert") {
  std::vector<float> const x = {0.5f};
  std::vector<float> const gate = {1.0f, 1.0f, 1.0f, 1.0f, 1.0f};
  RouterShape const shape{.num_tokens = 1, .hidden = 1, .num_experts = 5, .top_k = 3};
  auto const r = router_ref({.x = x, .gate_weight = gate}, shape, glm5_router_params());
  REQUIRE(r.ok());
  CHECK(r->topk_ids == Ids{0, 1, 2});
  CHECK(r->topk_weights[0] == Approx(2.5f / 3.0f).epsilon(1e-6));
}

TEST_CASE("router reference rejects bad shapes and inputs") {
  std::vector<float> const x = {1.0f};
  std::vector<float> const gate = {1.0f, 2.0f};
  auto const code = [&](RouterShape const& shape, RouterRefInputs const& in) {
    return router_ref(in, shape, glm5_router_params()).status().code();
  };
  RouterRefInputs const in{.x = x, .gate_weight = gate};
  CHECK(code({.num_tokens = 1, .hidden = 1, .num_experts = 2, .top_k = 3}, in) ==
        StatusCode::kInvalidArgument);
  CHECK(code({.num_tokens = 1, .hidden = 1, .num_experts = 1025, .top_k = 3}, in) ==
        StatusCode::kInvalidArgument);
  CHECK(code({.num_tokens = 2, .hidden = 1, .num_experts = 2, .top_k = 1}, in) ==
        StatusCode::kInvalidArgument);
  std::vector<std::int32_t> const token_ids = {5};
  std::vector<std::int32_t> const table = {0, 1};
  CHECK(code({.num_tokens = 1, .hidden = 1, .num_experts = 2, .top_k = 1},
             {.x = x, .gate_weight = gate, .token_ids = token_ids, .hash_table = table}) ==
        StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gcmoe::kernels
