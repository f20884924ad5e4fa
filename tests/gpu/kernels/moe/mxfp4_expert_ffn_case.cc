// The MXFP4 expert FFN GPU tests' case: see mxfp4_expert_ffn_case.h.
#include "tests/gpu/kernels/moe/mxfp4_expert_ffn_case.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <span>
#include <vector>

#include "engine/backends/cuda/stream.h"
#include "engine/formats/activation_quant.h"
#include "engine/formats/mxfp4.h"
#include "kernels/moe/expert_ffn_ref.h"
#include "kernels/moe/mxfp4_expert_wgmma_layout.h"
#include "tests/gpu/kernels/moe/expert_ffn_slots.h"
#include "tests/support/catch.h"
#include "tests/support/device_upload.h"
#include "tests/support/error_norm.h"

namespace gcmoe::kernels::mxfp4_ffn_test {
namespace {

using formats::ActivationRecipe;

struct Weight {
  formats::Mxfp4Weight q;
  std::vector<float> dequantized;
};

Weight make_weight(std::int64_t rows, std::int64_t cols, Scales scales, bool down,
                   std::mt19937_64& rng) {
  Weight w;
  w.q.dims = {rows, cols};
  w.q.packed.resize(static_cast<std::size_t>(rows * cols / 2));
  std::uniform_int_distribution<int> byte(0, 255);
  for (auto& b : w.q.packed) {
    b = static_cast<std::uint8_t>(byte(rng));
  }
  std::int64_t const blocks = cols / 32;
  w.q.scales.resize(static_cast<std::size_t>(rows * blocks));
  std::uniform_int_distribution<int> realistic(116, 122);
  std::uniform_int_distribution<int> narrow(0, 11);
  std::uniform_int_distribution<int> base_l1(119, 123);
  std::uniform_int_distribution<int> base_down(67, 167);
  std::uniform_int_distribution<int> pick(0, 4);
  constexpr int kExtremeOffsets[] = {0, -5, -12, -20, -40};
  for (std::int64_t r = 0; r < rows; ++r) {
    // kMixed: the row's 64-row tile (L1: 32 outputs, gate and up; L2: 64 down rows) in turn.
    bool const odd_tile = (down ? r / 64 : r / 32) % 2 == 1;
    Scales const row_scales =
        scales == Scales::kMixed ? (odd_tile ? Scales::kExtreme : Scales::kRealistic) : scales;
    int const base = row_scales == Scales::kExtreme && down ? base_down(rng) : base_l1(rng);
    for (std::int64_t b = 0; b < blocks; ++b) {
      int v = 0;
      switch (row_scales) {
        case Scales::kRealistic:
          v = realistic(rng);
          break;
        case Scales::kNarrowMax:
          v = base - narrow(rng);
          break;
        case Scales::kExtreme:
        case Scales::kMixed:
          // The first block of every chunk carries the base: each chunk mixes it with far
          // smaller blocks.
          v = base + (b % 4 == 0 ? 0 : kExtremeOffsets[pick(rng)]);
          break;
      }
      w.q.scales[static_cast<std::size_t>(r * blocks + b)] = static_cast<std::uint8_t>(v);
    }
  }
  w.dequantized.resize(static_cast<std::size_t>(rows * cols));
  REQUIRE(formats::dequantize_mxfp4(w.q.packed, w.q.scales, w.q.dims, w.dequantized).ok());
  return w;
}

using testing::upload;

}  // namespace

char const* scales_name(Scales s) {
  switch (s) {
    case Scales::kRealistic:
      return "realistic";
    case Scales::kNarrowMax:
      return "narrow-max-spread";
    case Scales::kExtreme:
      return "extreme-mixed";
    case Scales::kMixed:
      return "tiles-windowed-and-fallback";
  }
  return "?";
}

Errors run_case(Case const& c) {
  std::mt19937_64 rng(c.seed);
  std::int64_t const h = c.hidden;
  std::int64_t const inter = c.inter;
  struct Expert {
    Weight gate, up, down;
  };
  std::vector<Expert> experts;
  std::vector<std::uint8_t> l1_codes, l2_codes;
  std::vector<std::uint32_t> l1_scales, l2_scales;
  std::int64_t windowed_tiles = 0;
  std::int64_t tiles = 0;
  for (int e = 0; e < c.experts; ++e) {
    Expert ex{make_weight(inter, h, c.scales, false, rng),
              make_weight(inter, h, c.scales, false, rng),
              make_weight(h, inter, c.scales, true, rng)};
    auto l1 = pack_gate_up_mxfp4_wgmma({ex.gate.q.dims, ex.gate.q.packed, ex.gate.q.scales},
                                       {ex.up.q.dims, ex.up.q.packed, ex.up.q.scales});
    auto l2 = pack_down_mxfp4_wgmma({ex.down.q.dims, ex.down.q.packed, ex.down.q.scales});
    REQUIRE(l1.ok());
    REQUIRE(l2.ok());
    windowed_tiles += l1->windowed_tiles + l2->windowed_tiles;
    tiles += l1->tiles + l2->tiles;
    l1_codes.insert(l1_codes.end(), l1->codes.begin(), l1->codes.end());
    l1_scales.insert(l1_scales.end(), l1->scales.begin(), l1->scales.end());
    l2_codes.insert(l2_codes.end(), l2->codes.begin(), l2->codes.end());
    l2_scales.insert(l2_scales.end(), l2->scales.begin(), l2->scales.end());
    experts.push_back(std::move(ex));
  }

  // Route: top_k distinct experts per token; slots grouped by expert.
  std::vector<std::vector<int>> const tokens_of =
      testing::route_top_k(c.tokens, c.experts, c.top_k, false, rng);
  std::vector<float> const x = testing::random_tokens(c.tokens, h, rng);
  testing::ExpertSlots const slots = testing::group_by_expert(tokens_of, x, h, rng);
  std::vector<int> const& offsets = slots.offsets;
  std::int64_t const rows = slots.rows();
  auto xq = formats::quantize_activations(ActivationRecipe::kDeepseekUe8m0, slots.x, rows, h);
  REQUIRE(xq.ok());

  auto d_l1 = upload(l1_codes);
  auto d_l1s = upload(l1_scales);
  auto d_l2 = upload(l2_codes);
  auto d_l2s = upload(l2_scales);
  testing::DeviceExpertBatch const batch = testing::upload_batch(slots, *xq, h, inter);

  REQUIRE(preload_mxfp4_expert_wgmma().ok());
  auto stream = cuda::Stream::create();
  REQUIRE(stream.ok());
  testing::ReadyCounters const ready = testing::make_ready_counters(rows);
  Fp8ExpertGemmArgs args =
      testing::gate_up_args(batch, h, inter, c.rows_hint > 0 ? c.rows_hint : c.tokens);
  args.weights = d_l1.data();
  args.weight_scales = reinterpret_cast<float const*>(d_l1s.data());
  args.weight_stride = static_cast<std::int64_t>(l1_codes.size()) / c.experts;
  args.scale_stride = static_cast<std::int64_t>(l1_scales.size()) / c.experts;
  args.requant = RequantScale::kPow2;
  args.swiglu_limit = 10.0f;
  args.route_weights = batch.route.data();
  if (c.late_rows) {
    ready.attach(args, 3, 10'000'000'000);
  }
  Fp8ExpertGemmArgs down = testing::down_args(args, batch, h, inter);
  down.weights = d_l2.data();
  down.weight_scales = reinterpret_cast<float const*>(d_l2s.data());
  down.weight_stride = static_cast<std::int64_t>(l2_codes.size()) / c.experts;
  down.scale_stride = static_cast<std::int64_t>(l2_scales.size()) / c.experts;
  // L1's counters, then L2's.
  auto work = upload(std::vector<int>(4, 0));
  if (c.persistent) {
    args.work_counters = work.data();
    down.work_counters = work.data() + 2;
  }
  REQUIRE((c.order == testing::PairOrder::kStream ||
           (c.order == testing::PairOrder::kByRows && !c.late_rows)));
  auto const launch = [&](Fp8ExpertGemmArgs const& a) {
    return launch_mxfp4_expert_wgmma(a, stream->get(), c.tuning);
  };
  testing::run_ffn_pairs(launch, args, down, batch, rows, c.order, stream->get(), [&] {
    if (c.late_rows) {
      testing::release_rows_late(stream->get(), ready.ready.data(), ready.blocks, 3);
    }
  });
  CHECK(ready.error_flag() == 0u);
  std::vector<int> counters(4, -1);
  REQUIRE(work.copy_to_host(std::span<int>(counters)).ok());
  CHECK(counters == std::vector<int>(4, 0));  // reset by each grid's last CTA (or never used)

  std::vector<float> const y = testing::download_y(batch, rows, h);

  ExpertFfnOptions options;
  options.activation_recipe = ActivationRecipe::kDeepseekUe8m0;
  options.swiglu_limit = 10.0f;
  options.weight_before_down = true;
  std::vector<DenseExpertWeights> dense;
  for (auto const& e : experts) {
    dense.push_back({h, inter, e.gate.dequantized, e.up.dequantized, e.down.dequantized});
  }
  std::vector<float> const ref = testing::expert_ffn_reference(slots, dense, options);
  // Each output feature divided by its down row's largest scale (2^(max byte - 127)), so features
  // of wildly different scales (extreme bytes: 2^-60 .. 2^+40) all weigh in the error.
  auto const feature_normalized = [&](std::vector<float> const& reference) {
    std::vector<float> y_norm(y.size()), ref_norm_features(y.size());
    std::int64_t const blocks = inter / 32;
    for (int e = 0; e < c.experts; ++e) {
      for (std::int64_t col = 0; col < h; ++col) {
        auto const* b = experts[e].down.q.scales.data() + col * blocks;
        double const s = std::ldexp(1.0, static_cast<int>(*std::max_element(b, b + blocks)) - 127);
        for (std::int64_t r = offsets[e]; r < offsets[e + 1]; ++r) {
          y_norm[r * h + col] = static_cast<float>(y[r * h + col] / s);
          ref_norm_features[r * h + col] = static_cast<float>(reference[r * h + col] / s);
        }
      }
    }
    return testing::relative_l2_error(y_norm, ref_norm_features);
  };
  Errors errors;
  errors.rel_l2 = testing::relative_l2_error(y, ref);
  errors.feature_normalized = feature_normalized(ref);
  testing::StagedReference const staged =
      testing::staged_reference(slots, dense, options, batch, kRequantTolerance);
  errors.h = staged.h;
  errors.down_rel_l2 = testing::relative_l2_error(y, staged.y_from_kernel_h);
  errors.down_feature_normalized = feature_normalized(staged.y_from_kernel_h);
  // The slot row with the largest end-to-end error: where it is large, whether one row (one
  // token's requantization group) or all of them carry it.
  std::int64_t worst_row = 0;
  double worst_row_error = 0.0;
  for (std::int64_t r = 0; r < rows; ++r) {
    std::span<float const> const yr(y.data() + r * h, static_cast<std::size_t>(h));
    std::span<float const> const rr(ref.data() + r * h, static_cast<std::size_t>(h));
    double const e = testing::relative_l2_error(yr, rr);
    if (e > worst_row_error) {
      worst_row_error = e;
      worst_row = r;
    }
  }
  double ref_norm = 0.0;
  for (float const v : ref) {
    ref_norm += static_cast<double>(v) * v;
  }
  CHECK(ref_norm > 0.0);  // never all-zero data
  // The tile kinds the scales ask for (mxfp4_expert_wgmma_layout.h): checkpoint-like bytes decode
  // windowed, spreads beyond the window fall back, the mixed mode has both.
  switch (c.scales) {
    case Scales::kRealistic:
    case Scales::kNarrowMax:
      CHECK(windowed_tiles == tiles);
      break;
    case Scales::kExtreme:
      CHECK(windowed_tiles == 0);
      break;
    case Scales::kMixed:
      CHECK(windowed_tiles > 0);
      CHECK(windowed_tiles < tiles);
      break;
  }
  std::printf(
      "mxfp4 expert ffn H=%lld I=%lld E=%d T=%d k=%d rows=%lld hint=%d scales=%s "
      "%s%spass_rows=%d max_passes=%d windowed_tiles=%lld/%lld seed=%llu rel_l2_error=%.3e "
      "feature_normalized_rel_l2=%.3e worst_row=%lld (rel_l2 %.3e); h: %lld flips, %lld codes and "
      "%lld scales outside, worst deviation %.2e; down from the kernel's h: rel_l2 %.3e, "
      "feature-normalized %.3e\n",
      static_cast<long long>(h), static_cast<long long>(inter), c.experts, c.tokens, c.top_k,
      static_cast<long long>(rows), args.rows_per_expert_hint, scales_name(c.scales),
      c.late_rows ? "late-rows " : "", c.persistent ? "persistent " : "", c.tuning.pass_rows,
      c.tuning.max_passes, static_cast<long long>(windowed_tiles), static_cast<long long>(tiles),
      static_cast<unsigned long long>(c.seed), errors.rel_l2, errors.feature_normalized,
      static_cast<long long>(worst_row), worst_row_error, static_cast<long long>(errors.h.flips),
      static_cast<long long>(errors.h.codes_outside),
      static_cast<long long>(errors.h.scales_outside), errors.h.worst_deviation, errors.down_rel_l2,
      errors.down_feature_normalized);
  return errors;
}

void check(Case const& c) {
  Errors const e = run_case(c);
  CHECK(e.h.codes_outside == 0);
  CHECK(e.h.scales_outside == 0);
  CHECK(e.down_rel_l2 < kBound);
  CHECK(e.down_feature_normalized < kBound);
  CHECK(e.rel_l2 < kEndToEndBound);
  CHECK(e.feature_normalized < kEndToEndBound);
}

}  // namespace gcmoe::kernels::mxfp4_ffn_test
