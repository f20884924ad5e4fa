#include "tests/gpu/kernels/moe/fp8_expert_ffn_case.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

#include "engine/backends/cuda/stream.h"
#include "engine/formats/activation_quant.h"
#include "engine/formats/fp8_block.h"
#include "kernels/moe/expert_ffn_ref.h"
#include "kernels/moe/fp8_expert_gemm.h"
#include "kernels/moe/fp8_expert_layout.h"
#include "kernels/moe/fp8_expert_wgmma.h"
#include "kernels/moe/fp8_expert_wgmma_layout.h"
#include "tests/gpu/kernels/moe/expert_ffn_slots.h"
#include "tests/support/catch.h"
#include "tests/support/device_upload.h"
#include "tests/support/error_norm.h"

namespace gcmoe::kernels::fp8_ffn_test {
namespace {

using formats::ActivationRecipe;
using testing::upload;

struct Expert {
  std::vector<float> gate, up, down;  // dequantized [I,H], [I,H], [H,I]
};

// Random weights at a realistic magnitude, with 128-row blocks of different size so every
// block's scale matters, quantized to FP8 with 128×128 f32 scales (the GLM-5.2 recipe).
formats::Fp8F32Blocks make_weight(std::int64_t rows, std::int64_t cols, std::mt19937_64& rng,
                                  std::vector<float>& dequantized) {
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<float> w(static_cast<std::size_t>(rows * cols));
  for (std::int64_t r = 0; r < rows; ++r) {
    float const block_gain = 1.0f + static_cast<float>((r / 128) % 3);
    for (std::int64_t k = 0; k < cols; ++k) {
      w[r * cols + k] = normal(rng) * block_gain * (k / 128 % 2 == 0 ? 1.0f : 0.25f);
    }
  }
  auto q = formats::quantize_fp8_f32(w, {rows, cols}, formats::kBlock128);
  REQUIRE(q.ok());
  dequantized.resize(w.size());
  REQUIRE(formats::dequantize_fp8_f32(q->codes, q->scale_inv, {rows, cols}, formats::kBlock128,
                                      dequantized)
              .ok());
  return std::move(q).value();
}

}  // namespace

char const* kernel_name(Kernel kernel) {
  switch (kernel) {
    case Kernel::kMmaSync:
      return "mma.sync";
    case Kernel::kWgmma:
      return "wgmma";
  }
  return "?";
}

double run_case(Case const& c) {
  std::mt19937_64 rng(c.seed);
  std::int64_t const h = c.hidden;
  std::int64_t const inter = c.inter;
  std::vector<Expert> experts(c.experts);
  std::vector<std::uint8_t> l1_bytes, l2_bytes;
  std::vector<float> l1_scales, l2_scales;
  for (auto& e : experts) {
    auto gate = make_weight(inter, h, rng, e.gate);
    auto up = make_weight(inter, h, rng, e.up);
    auto down = make_weight(h, inter, rng, e.down);
    Fp8WeightView const gate_view{{inter, h}, gate.codes, gate.scale_inv};
    Fp8WeightView const up_view{{inter, h}, up.codes, up.scale_inv};
    Fp8WeightView const down_view{{h, inter}, down.codes, down.scale_inv};
    bool const wgmma = c.kernel == Kernel::kWgmma;
    auto l1 = wgmma ? pack_gate_up_wgmma(gate_view, up_view) : pack_gate_up(gate_view, up_view);
    auto l2 = wgmma ? pack_down_wgmma(down_view) : pack_down(down_view);
    REQUIRE(l1.ok());
    REQUIRE(l2.ok());
    l1_bytes.insert(l1_bytes.end(), l1->bytes.begin(), l1->bytes.end());
    l1_scales.insert(l1_scales.end(), l1->scales.begin(), l1->scales.end());
    l2_bytes.insert(l2_bytes.end(), l2->bytes.begin(), l2->bytes.end());
    l2_scales.insert(l2_scales.end(), l2->scales.begin(), l2->scales.end());
  }

  // Route: top_k distinct experts per token; slots grouped by expert.
  std::vector<std::vector<int>> tokens_of(c.experts);
  if (c.expert_rows.empty()) {
    tokens_of = testing::route_top_k(c.tokens, c.experts, c.top_k, c.all_to_expert_zero, rng);
  }
  std::vector<int> token_order(static_cast<std::size_t>(c.tokens));
  std::iota(token_order.begin(), token_order.end(), 0);
  for (std::size_t e = 0; e < c.expert_rows.size(); ++e) {
    REQUIRE(c.expert_rows[e] <= c.tokens);
    std::shuffle(token_order.begin(), token_order.end(), rng);
    tokens_of[e].assign(token_order.begin(), token_order.begin() + c.expert_rows[e]);
    std::sort(tokens_of[e].begin(), tokens_of[e].end());
  }
  std::vector<float> const x = testing::random_tokens(c.tokens, h, rng);
  testing::ExpertSlots const slots = testing::group_by_expert(tokens_of, x, h, rng);
  std::vector<int> const& offsets = slots.offsets;
  std::int64_t const rows = slots.rows();
  ActivationRecipe const recipe =
      c.deepseek_semantics ? ActivationRecipe::kDeepseekUe8m0 : ActivationRecipe::kGlmDynamic;
  auto xq = formats::quantize_activations(recipe, slots.x, rows, h);
  REQUIRE(xq.ok());

  auto d_l1 = upload(l1_bytes);
  auto d_l1s = upload(l1_scales);
  auto d_l2 = upload(l2_bytes);
  auto d_l2s = upload(l2_scales);
  testing::DeviceExpertBatch const batch = testing::upload_batch(slots, *xq, h, inter);

  bool const wgmma = c.kernel == Kernel::kWgmma;
  REQUIRE((wgmma ? preload_fp8_expert_wgmma() : preload_fp8_expert_gemm()).ok());
  auto stream = cuda::Stream::create();
  REQUIRE(stream.ok());
  auto const launch = [&](Fp8ExpertGemmArgs const& a) {
    return wgmma ? launch_fp8_expert_wgmma(a, stream->get(), Fp8WgmmaPasses{0, 0, c.k_splits})
                 : launch_fp8_expert_gemm(a, stream->get());
  };
  testing::ReadyCounters const ready = testing::make_ready_counters(rows);
  Fp8ExpertGemmArgs args =
      testing::gate_up_args(batch, h, inter, c.rows_hint > 0 ? c.rows_hint : c.tokens);
  args.weights = d_l1.data();
  args.weight_scales = d_l1s.data();
  args.weight_stride = static_cast<std::int64_t>(l1_bytes.size()) / c.experts;
  args.scale_stride = static_cast<std::int64_t>(l1_scales.size()) / c.experts;
  args.requant = c.deepseek_semantics ? RequantScale::kPow2 : RequantScale::kAmaxOver448;
  args.swiglu_limit = c.deepseek_semantics ? 10.0f : 0.0f;
  args.route_weights = c.deepseek_semantics ? batch.route.data() : nullptr;
  if (!c.tma_x) {
    args.x_rows = 0;
  }
  if (c.fixed_expert) {
    REQUIRE((wgmma && c.experts == 1));
    args.fixed_expert = 0;
    args.fixed_rows = static_cast<int>(rows);
  }
  if (c.ready != Case::Ready::kNoCounters) {
    ready.attach(args, 7, c.ready == Case::Ready::kNever ? 1'000'000 : 10'000'000'000);
  }
  Fp8ExpertGemmArgs down = testing::down_args(args, batch, h, inter);
  if (!c.tma_x) {
    down.x_rows = 0;
  }
  down.weights = d_l2.data();
  down.weight_scales = d_l2s.data();
  down.weight_stride = static_cast<std::int64_t>(l2_bytes.size()) / c.experts;
  down.scale_stride = static_cast<std::int64_t>(l2_scales.size()) / c.experts;
  REQUIRE(
      (c.order == testing::PairOrder::kStream || (wgmma && c.ready == Case::Ready::kNoCounters)));
  testing::run_ffn_pairs(launch, args, down, batch, rows, c.order, stream->get(), [&] {
    if (c.ready == Case::Ready::kLate) {
      testing::release_rows_late(stream->get(), ready.ready.data(), ready.blocks, 7);
    }
  });
  if (c.order == testing::PairOrder::kByRowsNeverReleased) {
    return 0.0;
  }
  unsigned const error_flag = ready.error_flag();
  if (c.ready == Case::Ready::kNever) {
    std::printf("fp8 expert ffn wgmma: rows never ready -> error flag %u\n", error_flag);
    CHECK(error_flag == 1u);
    return 0.0;
  }
  CHECK(error_flag == 0u);

  std::vector<float> const y = testing::download_y(batch, rows, h);

  ExpertFfnOptions options;
  options.activation_recipe = recipe;
  options.swiglu_limit = c.deepseek_semantics ? 10.0f : 0.0f;
  options.weight_before_down = c.deepseek_semantics;
  std::vector<DenseExpertWeights> dense;
  for (auto const& e : experts) {
    dense.push_back({h, inter, e.gate, e.up, e.down});
  }
  std::vector<float> const ref = testing::expert_ffn_reference(slots, dense, options);
  double const end_to_end = testing::relative_l2_error(y, ref);
  testing::StagedReference const staged =
      testing::staged_reference(slots, dense, options, batch, kRequantTolerance);
  double const error = testing::relative_l2_error(y, staged.y_from_kernel_h);
  CHECK(staged.h.codes_outside == 0);
  CHECK(staged.h.scales_outside == 0);
  CHECK(end_to_end < kEndToEndBound);
  int max_rows_per_expert = 0;
  for (int e = 0; e < c.experts; ++e) {
    max_rows_per_expert = std::max(max_rows_per_expert, offsets[e + 1] - offsets[e]);
  }
  std::printf(
      "fp8 expert ffn %s H=%lld I=%lld E=%d T=%d k=%d rows=%lld max_rows/expert=%d hint=%d "
      "%s tma_x=%d fixed=%d k_splits=%d seed=%llu rel_l2_error=%.3e; h: %lld flips, %lld codes and "
      "%lld scales "
      "outside, worst deviation %.2e; down from the kernel's h: rel_l2 %.3e\n",
      kernel_name(c.kernel), static_cast<long long>(h), static_cast<long long>(inter), c.experts,
      c.tokens, c.top_k, static_cast<long long>(rows), max_rows_per_expert,
      args.rows_per_expert_hint, c.deepseek_semantics ? "deepseek-semantics" : "glm",
      c.tma_x ? 1 : 0, c.fixed_expert ? 1 : 0, c.k_splits, static_cast<unsigned long long>(c.seed),
      end_to_end, static_cast<long long>(staged.h.flips),
      static_cast<long long>(staged.h.codes_outside),
      static_cast<long long>(staged.h.scales_outside), staged.h.worst_deviation, error);
  return error;
}

}  // namespace gcmoe::kernels::fp8_ffn_test
