#include "tests/gpu/kernels/moe/moe_layer_fixture.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <type_traits>

#include "engine/formats/fp8_block.h"
#include "engine/formats/mxfp4.h"
#include "kernels/moe/fp8_expert_wgmma_layout.h"
#include "kernels/moe/mxfp4_expert_wgmma_layout.h"
#include "kernels/moe/packed_expert_sections.h"
#include "tests/support/catch.h"
#include "tests/support/device_upload.h"

namespace gcmoe::testing {
namespace {

using kernels::ExpertWeightFormat;
using kernels::PackedExpertSections;

using cuda::DeviceBuffer;

// One expert: dequantized fp32 weights for the reference, packed bytes for the GPU.
struct Expert {
  std::vector<float> gate, up, down;
  std::vector<std::uint8_t> packed;
};

std::vector<float> random_fp8_weight(std::int64_t rows, std::int64_t cols, std::mt19937_64& rng,
                                     formats::Fp8F32Blocks& q) {
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::vector<float> w(static_cast<std::size_t>(rows * cols));
  for (std::int64_t r = 0; r < rows; ++r) {
    float const gain = 1.0f + static_cast<float>((r / 128) % 2);
    for (std::int64_t k = 0; k < cols; ++k) {
      w[r * cols + k] = normal(rng) * gain;
    }
  }
  auto quantized = formats::quantize_fp8_f32(w, {rows, cols}, formats::kBlock128);
  REQUIRE(quantized.ok());
  q = std::move(quantized).value();
  std::vector<float> dequantized(w.size());
  REQUIRE(formats::dequantize_fp8_f32(q.codes, q.scale_inv, {rows, cols}, formats::kBlock128,
                                      dequantized)
              .ok());
  return dequantized;
}

// An MXFP4 weight as the checkpoint stores it (the DeepSeek recipe on random values), and its
// dequantized values for the reference.
std::vector<float> random_mxfp4_weight(std::int64_t rows, std::int64_t cols, std::mt19937_64& rng,
                                       formats::Mxfp4Weight& q) {
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::vector<float> w(static_cast<std::size_t>(rows * cols));
  for (auto& v : w) {
    v = normal(rng);
  }
  auto quantized = formats::quantize_mxfp4(w, {rows, cols});
  REQUIRE(quantized.ok());
  q = std::move(quantized).value();
  std::vector<float> dequantized(w.size());
  REQUIRE(formats::dequantize_mxfp4(q.packed, q.scales, q.dims, dequantized).ok());
  return dequantized;
}

Expert make_mxfp4_expert(std::int64_t hidden, std::int64_t inter, std::mt19937_64& rng) {
  Expert e;
  formats::Mxfp4Weight gq, uq, dq;
  e.gate = random_mxfp4_weight(inter, hidden, rng, gq);
  e.up = random_mxfp4_weight(inter, hidden, rng, uq);
  e.down = random_mxfp4_weight(hidden, inter, rng, dq);
  auto l1 = kernels::pack_gate_up_mxfp4_wgmma({gq.dims, gq.packed, gq.scales},
                                              {uq.dims, uq.packed, uq.scales});
  auto l2 = kernels::pack_down_mxfp4_wgmma({dq.dims, dq.packed, dq.scales});
  REQUIRE((l1.ok() && l2.ok()));
  PackedExpertSections const s = kernels::mxfp4_expert_sections(hidden, inter);
  e.packed.assign(static_cast<std::size_t>(s.stride), 0);
  std::memcpy(e.packed.data() + s.l1_codes, l1->codes.data(), l1->codes.size());
  std::memcpy(e.packed.data() + s.l1_scales, l1->scales.data(), l1->scales.size() * 4);
  std::memcpy(e.packed.data() + s.l2_codes, l2->codes.data(), l2->codes.size());
  std::memcpy(e.packed.data() + s.l2_scales, l2->scales.data(), l2->scales.size() * 4);
  return e;
}

Expert make_expert(std::int64_t hidden, std::int64_t inter, std::mt19937_64& rng) {
  Expert e;
  formats::Fp8F32Blocks gq, uq, dq;
  e.gate = random_fp8_weight(inter, hidden, rng, gq);
  e.up = random_fp8_weight(inter, hidden, rng, uq);
  e.down = random_fp8_weight(hidden, inter, rng, dq);
  auto l1 = kernels::pack_gate_up_wgmma({{inter, hidden}, gq.codes, gq.scale_inv},
                                        {{inter, hidden}, uq.codes, uq.scale_inv});
  auto l2 = kernels::pack_down_wgmma({{hidden, inter}, dq.codes, dq.scale_inv});
  REQUIRE((l1.ok() && l2.ok()));
  PackedExpertSections const s = kernels::fp8_expert_sections(hidden, inter);
  e.packed.assign(static_cast<std::size_t>(s.stride), 0);
  std::memcpy(e.packed.data() + s.l1_codes, l1->bytes.data(), l1->bytes.size());
  std::memcpy(e.packed.data() + s.l1_scales, l1->scales.data(), l1->scales.size() * 4);
  std::memcpy(e.packed.data() + s.l2_codes, l2->bytes.data(), l2->bytes.size());
  std::memcpy(e.packed.data() + s.l2_scales, l2->scales.data(), l2->scales.size() * 4);
  return e;
}

}  // namespace

kernels::MoeLayerDeviceWeights MoeLayerFixture::weights() const {
  bool const apart = c.format == ExpertWeightFormat::kMxfp4;
  return {.gate_weight = gate.data(),
          .bias = bias.data(),
          .experts = experts.data(),
          .sections = kernels::packed_expert_sections(c.format, c.hidden, c.inter),
          .has_shared = true,
          .format = c.format,
          .shared_expert = apart ? shared_expert.data() : nullptr,
          .shared_sections =
              apart ? kernels::fp8_expert_sections(c.hidden, c.inter) : PackedExpertSections{}};
}

std::vector<float> MoeLayerFixture::out() const {
  std::vector<float> host(x.size());
  REQUIRE(d_out.copy_to_host(host).ok());
  return host;
}

int MoeLayerFixture::selection_mismatches(std::int32_t const* device_topk_ids) const {
  std::vector<std::int32_t> ids(static_cast<std::size_t>(c.tokens) * c.top_k);
  REQUIRE(cudaMemcpy(ids.data(), device_topk_ids, ids.size() * sizeof(std::int32_t),
                     cudaMemcpyDeviceToHost) == cudaSuccess);
  int mismatches = 0;
  for (int t = 0; t < c.tokens; ++t) {
    std::vector<int> gpu(ids.begin() + t * c.top_k, ids.begin() + (t + 1) * c.top_k);
    std::vector<int> cpu(ref.routing.topk_ids.begin() + t * c.top_k,
                         ref.routing.topk_ids.begin() + (t + 1) * c.top_k);
    std::sort(gpu.begin(), gpu.end());
    std::sort(cpu.begin(), cpu.end());
    mismatches += gpu != cpu;
  }
  return mismatches;
}

char const* MoeLayerFixture::family_name() const {
  if (c.family == kernels::MoeFamily::kGlm52) {
    return "glm5.2";
  }
  return c.format == ExpertWeightFormat::kMxfp4 ? "deepseek-v4.1 (mxfp4 routed)" : "deepseek-v4.1";
}

MoeLayerFixture make_moe_layer_fixture(MoeLayerCase const& c) {
  MoeLayerFixture f;
  f.c = c;
  std::mt19937_64 rng(c.seed);
  f.config = kernels::moe_layer_config(c.family, c.hidden, c.inter, c.experts, c.top_k,
                                       /*fp8_activations=*/true);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> gate(static_cast<std::size_t>(c.experts) * c.hidden);
  for (auto& v : gate) {
    v = normal(rng) * 0.05f;
  }
  std::vector<float> bias(static_cast<std::size_t>(c.experts));
  for (auto& v : bias) {
    v = normal(rng) * 0.1f;
  }
  bool const mxfp4 = c.format == ExpertWeightFormat::kMxfp4;
  std::vector<Expert> experts;
  std::vector<std::uint8_t> packed;
  for (int e = 0; e < c.experts; ++e) {
    experts.push_back(mxfp4 ? make_mxfp4_expert(c.hidden, c.inter, rng)
                            : make_expert(c.hidden, c.inter, rng));
    packed.insert(packed.end(), experts.back().packed.begin(), experts.back().packed.end());
  }
  // The shared expert is FP8 in both formats: expert E of the FP8 buffer, or apart.
  Expert const shared = make_expert(c.hidden, c.inter, rng);
  if (!mxfp4) {
    packed.insert(packed.end(), shared.packed.begin(), shared.packed.end());
  }
  f.x.resize(static_cast<std::size_t>(c.tokens) * c.hidden);
  for (auto& v : f.x) {
    v = normal(rng);
  }
  // Keep every dequantized matrix in the fixture so ref_weights stays valid (inner buffers do
  // not move when the fixture does).
  f.host_weights.reserve(2 + 3 * experts.size() + 3);
  f.host_weights.push_back(gate);
  f.host_weights.push_back(bias);
  f.ref_weights.gate_weight = f.host_weights[0];
  f.ref_weights.bias = f.host_weights[1];
  auto const keep = [&](Expert const& e) {
    f.host_weights.push_back(e.gate);
    f.host_weights.push_back(e.up);
    f.host_weights.push_back(e.down);
    std::size_t const n = f.host_weights.size();
    return kernels::DenseExpertWeights{c.hidden, c.inter, f.host_weights[n - 3],
                                       f.host_weights[n - 2], f.host_weights[n - 1]};
  };
  for (auto const& e : experts) {
    f.ref_weights.experts.push_back(keep(e));
  }
  f.ref_weights.shared = keep(shared);
  auto ref = kernels::moe_layer_ref(f.config, f.ref_weights, f.x, {});
  REQUIRE(ref.ok());
  f.ref = std::move(ref).value();
  f.gate = upload(gate);
  f.bias = upload(bias);
  f.experts = upload(packed);
  if (mxfp4) {
    f.shared_expert = upload(shared.packed);
  }
  f.d_x = upload(f.x);
  auto out = DeviceBuffer<float>::allocate(f.x.size());
  REQUIRE(out.ok());
  f.d_out = std::move(out).value();
  return f;
}

MoeLayerCase deepseek_small_case(ExpertWeightFormat format) {
  MoeLayerCase c;
  c.family = kernels::MoeFamily::kDeepseekV41;
  c.format = format;
  c.hidden = 384;
  c.experts = 24;
  c.top_k = 6;
  return c;
}

RankWeights upload_rank_weights(MoeLayerFixture const& f, int ranks, int rank) {
  REQUIRE((ranks >= 1 && f.c.experts % ranks == 0 && rank >= 0 && rank < ranks));
  int const local = f.c.experts / ranks;
  std::int64_t const stride = f.weights().sections.stride;
  auto const copy = [](auto& to, auto const* from, std::size_t count) {
    using T = std::remove_cvref_t<decltype(*from)>;
    auto buffer = DeviceBuffer<T>::allocate(count);
    REQUIRE(buffer.ok());
    REQUIRE(cudaMemcpy(buffer->data(), from, count * sizeof(T), cudaMemcpyDefault) == cudaSuccess);
    to = std::move(buffer).value();
  };
  RankWeights w;
  copy(w.gate, f.gate.data(), f.gate.size());
  copy(w.bias, f.bias.data(), f.bias.size());
  // Its E/R routed experts, then the shared one — or the shared one apart (MXFP4 routed).
  bool const apart = f.shared_expert.size() > 0;
  auto experts = DeviceBuffer<std::uint8_t>::allocate(
      static_cast<std::size_t>((local + (apart ? 0 : 1)) * stride));
  REQUIRE(experts.ok());
  w.experts = std::move(experts).value();
  REQUIRE(cudaMemcpy(w.experts.data(), f.experts.data() + rank * local * stride,
                     static_cast<std::size_t>(local * stride), cudaMemcpyDefault) == cudaSuccess);
  w.weights = f.weights();
  if (apart) {
    copy(w.shared_expert, f.shared_expert.data(), f.shared_expert.size());
    w.weights.shared_expert = w.shared_expert.data();
  } else {
    REQUIRE(cudaMemcpy(w.experts.data() + local * stride, f.experts.data() + f.c.experts * stride,
                       static_cast<std::size_t>(stride), cudaMemcpyDefault) == cudaSuccess);
  }
  w.weights.gate_weight = w.gate.data();
  w.weights.bias = w.bias.data();
  w.weights.experts = w.experts.data();
  w.weights.shared_index = local;
  return w;
}

}  // namespace gcmoe::testing
