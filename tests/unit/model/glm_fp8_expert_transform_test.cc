// The GLM-5.2 FP8 expert transform: loading with it puts, for every local expert, exactly what
// kernels::pack_gate_up_wgmma / pack_down_wgmma make of the checkpoint's tensors at the sections
// its layout names; shapes the kernel cannot take are refused up front.
#include "engine/model/glm_fp8_expert_transform.h"

#include <cstring>
#include <vector>

#include "engine/model/weight_loader.h"
#include "engine/model/weights/model_weight_spec.h"
#include "kernels/moe/fp8_expert_wgmma_layout.h"
#include "tests/support/catch.h"
#include "tests/unit/tiny/tiny_test_support.h"

namespace gcmoe::model {
namespace {

std::vector<float> floats(checkpoint::TensorView const& view) {
  std::vector<float> out(view.bytes.size() / sizeof(float));
  std::memcpy(out.data(), view.bytes.data(), view.bytes.size());
  return out;
}

struct Fp8Source {
  std::vector<float> scales;
  kernels::Fp8WeightView view;
};

Fp8Source source(checkpoint::Checkpoint const& checkpoint, LinearSpec const& linear) {
  auto const codes = checkpoint.tensor(linear.weight.name);
  auto const scale = checkpoint.tensor(linear.scale->name);
  REQUIRE(codes.ok());
  REQUIRE(scale.ok());
  Fp8Source out{floats(*scale), {}};
  out.view = {linear.dims,
              {reinterpret_cast<std::uint8_t const*>(codes->bytes.data()), codes->bytes.size()},
              {}};
  return out;
}

void check_section(std::span<std::byte const> packed, std::int64_t const codes_at,
                   std::int64_t const scales_at, kernels::PackedExpertWeights const& direct) {
  CHECK(std::memcmp(packed.data() + codes_at, direct.bytes.data(), direct.bytes.size()) == 0);
  CHECK(std::memcmp(packed.data() + scales_at, direct.scales.data(),
                    direct.scales.size() * sizeof(float)) == 0);
}

TEST_CASE(
    "loaded GLM experts equal pack_gate_up_wgmma / pack_down_wgmma of the checkpoint tensors") {
  std::filesystem::path const dir =
      tiny::testing::written_model(config::ModelFamily::kGlmMoeDsa).dir->path();
  auto const model = describe_model(dir);
  REQUIRE(model.ok());
  auto const checkpoint = checkpoint::Checkpoint::open(dir);
  REQUIRE(checkpoint.ok());
  auto const transform = default_expert_transform(model->config);
  REQUIRE(transform != nullptr);
  CHECK(transform->name() == "glm_fp8_wgmma");

  LoadOptions options;
  options.selection = {2, 1, false, nullptr, transform.get()};
  options.workers = 2;
  auto const loaded =
      load_weights(*checkpoint, model->spec, options, std::make_unique<HostWeightStore>());
  INFO(loaded.status().to_string());
  REQUIRE(loaded.ok());
  std::size_t checked = 0;
  for (LocalExpertBlock const& block : loaded->expert_blocks()) {
    REQUIRE(block.packed.size() == block.experts.size());
    BlockSpec const* layer = nullptr;
    for (BlockSpec const& candidate : model->spec.layers) {
      if (candidate.moe && candidate.moe->prefix == block.prefix) {
        layer = &candidate;
      }
    }
    REQUIRE(layer != nullptr);
    for (std::size_t i = 0; i < block.experts.size(); ++i) {
      SwigluSpec const& expert = layer->moe->experts[static_cast<std::size_t>(block.experts[i])];
      auto const layout = glm_fp8_packed_layout(expert);
      REQUIRE(layout.ok());
      REQUIRE(block.packed[i].bytes == layout->total);
      // The expert's own tensors are not placed separately once packed.
      CHECK_FALSE(loaded->find(expert.gate.weight.name).ok());

      Fp8Source gate = source(*checkpoint, expert.gate);
      Fp8Source up = source(*checkpoint, expert.up);
      Fp8Source down = source(*checkpoint, expert.down);
      gate.view.scale_inv = gate.scales;
      up.view.scale_inv = up.scales;
      down.view.scale_inv = down.scales;
      auto const l1 = kernels::pack_gate_up_wgmma(gate.view, up.view);
      auto const l2 = kernels::pack_down_wgmma(down.view);
      REQUIRE(l1.ok());
      REQUIRE(l2.ok());
      auto const packed = loaded->host_bytes(block.packed[i]);
      REQUIRE(packed.ok());
      check_section(*packed, layout->l1_codes, layout->l1_scales, *l1);
      check_section(*packed, layout->l2_codes, layout->l2_scales, *l2);
      ++checked;
    }
  }
  CHECK(checked == 3 * 8);  // 3 trunk MoE layers × experts 8..15
  CHECK(loaded->stats().experts == 24);
}

TEST_CASE("the packed layout of a real GLM-5.2 expert") {
  auto const gate = linear_spec(
      "g", 2048, 6144, {config::WeightEncoding::kFp8E4m3, config::ScaleKind::kF32, 128, 128},
      ScaleNaming::kWeightScaleInv);
  REQUIRE(gate.ok());
  auto const down = linear_spec("d", 6144, 2048, gate->format, ScaleNaming::kWeightScaleInv);
  REQUIRE(down.ok());
  auto const layout = glm_fp8_packed_layout({*gate, *gate, *down});
  REQUIRE(layout.ok());
  CHECK(layout->l1_tiles == 64);
  CHECK(layout->l1_chunks == 48);
  CHECK(layout->l2_tiles == 96);
  CHECK(layout->l2_chunks == 16);
  // Codes: 2 × 2048 × 6144 + 6144 × 2048 bytes, as in the checkpoint; scales per (tile, chunk).
  CHECK(layout->l1_scales == 2 * 2048 * 6144);
  CHECK(layout->l2_codes == layout->l1_scales + 64 * 48 * 2 * 4);
  CHECK(layout->total == layout->l2_codes + 6144 * 2048 + 96 * 16 * 2 * 4);
}

TEST_CASE("formats the FP8 kernel cannot take are refused") {
  config::WeightFormat const e8m0_32{config::WeightEncoding::kFp8E4m3, config::ScaleKind::kE8m0, 32,
                                     32};
  auto const gate =
      linear_spec("layers.1.ffn.experts.0.w1", 256, 256, e8m0_32, ScaleNaming::kDotScale);
  REQUIRE(gate.ok());
  auto const bytes = GlmFp8ExpertTransform().packed_bytes({*gate, *gate, *gate});
  REQUIRE_FALSE(bytes.ok());
  CHECK(bytes.status().message().find("layers.1.ffn.experts.0.w1.weight") != std::string::npos);
  config::ModelConfig mxfp4;
  mxfp4.expert_format = {config::WeightEncoding::kMxfp4, config::ScaleKind::kE8m0, 1, 32};
  CHECK(default_expert_transform(mxfp4) == nullptr);  // MXFP4 experts load raw for now
}

}  // namespace
}  // namespace gcmoe::model
