// The CPU MoE-layer reference (kernels/moe/moe_layer_ref.h, exact-fp32 mode) against
// transformers' own MoE blocks: tests/fixtures/moe/*.safetensors, written once by
// scripts/fixtures/make_moe_goldens.py (tiny random layers, fp32 forward on the CPU; the header
// of that script says how to rerun it). For every fixture file and every case (T = 1, 5, 33):
//   - the family's semantics (score function, routed scaling, normalisation, SwiGLU clamp, gate
//     temperature) equal the config values the fixture was made with;
//   - the selection scores s + bias equal those of transformers' router logits (fp32 rounding);
//   - each token selects the same experts (as a set; a hash layer also in the table's order)
//     with the same routing weights, to fp32 rounding;
//   - the layer output equals transformers' fp32 output to fp32 rounding (with the reference's
//     bf16 output rounding switched off), and with that rounding on (the default, the engine's
//     bf16 hidden states) every element is within one bf16 rounding of it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/checkpoint/file_handle.h"
#include "engine/checkpoint/safetensors_header.h"
#include "engine/formats/bf16.h"
#include "kernels/moe/moe_layer_ref.h"
#include "tests/support/catch.h"
#include "tests/support/error_norm.h"

namespace gcmoe::kernels {
namespace {

using checkpoint::DType;
using checkpoint::MappedFile;
using checkpoint::SafetensorsHeader;
using checkpoint::TensorInfo;

std::filesystem::path fixture_dir() {
  return std::filesystem::path(GCMOE_MOE_GOLDEN_DIR);
}

// One fixture file: its validated header and a mapping of its bytes.
struct Fixture {
  std::string label;
  SafetensorsHeader header;
  MappedFile map;

  std::string const& meta(std::string const& key) const {
    auto const it = header.metadata.find(key);
    INFO(label << ": metadata key " << key);
    REQUIRE(it != header.metadata.end());
    return it->second;
  }
  int meta_int(std::string const& key) const { return std::stoi(meta(key)); }
  float meta_float(std::string const& key) const { return std::stof(meta(key)); }

  bool has(std::string_view name) const { return header.find(name) != nullptr; }

  TensorInfo const& info(std::string_view name, std::vector<std::int64_t> const& shape) const {
    TensorInfo const* t = header.find(name);
    INFO(label << ": tensor " << name);
    REQUIRE(t != nullptr);
    CHECK(t->shape == shape);
    REQUIRE(t->begin + t->size <= map.bytes().size());
    return *t;
  }

  // F32, or BF16 widened exactly.
  std::vector<float> floats(std::string_view name, std::vector<std::int64_t> const& shape) const {
    TensorInfo const& t = info(name, shape);
    std::span<std::byte const> const bytes = map.bytes().subspan(t.begin, t.size);
    std::vector<float> out;
    if (t.dtype == DType::kF32) {
      out.resize(t.size / sizeof(float));
      std::memcpy(out.data(), bytes.data(), t.size);
    } else {
      REQUIRE(t.dtype == DType::kBf16);
      out.resize(t.size / sizeof(std::uint16_t));
      for (std::size_t i = 0; i < out.size(); ++i) {
        std::uint16_t bits = 0;
        std::memcpy(&bits, bytes.data() + 2 * i, sizeof(bits));
        out[i] = formats::decode_bf16(bits);
      }
    }
    return out;
  }

  // I64 narrowed to int32 (token and expert ids), or U8 widened (masks).
  std::vector<std::int32_t> ints(std::string_view name,
                                 std::vector<std::int64_t> const& shape) const {
    TensorInfo const& t = info(name, shape);
    std::span<std::byte const> const bytes = map.bytes().subspan(t.begin, t.size);
    std::vector<std::int32_t> out;
    if (t.dtype == DType::kU8) {
      for (std::byte const b : bytes) {
        out.push_back(static_cast<std::int32_t>(b));
      }
      return out;
    }
    REQUIRE(t.dtype == DType::kI64);
    out.resize(t.size / sizeof(std::int64_t));
    for (std::size_t i = 0; i < out.size(); ++i) {
      std::int64_t v = 0;
      std::memcpy(&v, bytes.data() + 8 * i, sizeof(v));
      REQUIRE(v >= INT32_MIN);
      REQUIRE(v <= INT32_MAX);
      out[i] = static_cast<std::int32_t>(v);
    }
    return out;
  }
};

Fixture open_fixture(std::filesystem::path const& path) {
  auto header = checkpoint::read_safetensors_header(path);
  INFO(path.string() << ": " << header.status().to_string());
  REQUIRE(header.ok());
  auto map = MappedFile::open(path);
  REQUIRE(map.ok());
  return Fixture{path.filename().string(), std::move(*header), std::move(*map)};
}

MoeFamily family_of(std::string const& name) {
  if (name == "deepseek_v4") {
    return MoeFamily::kDeepseekV4;
  }
  if (name == "deepseek_v41") {
    return MoeFamily::kDeepseekV41;
  }
  INFO("family " << name);
  REQUIRE(name == "glm_moe_dsa");
  return MoeFamily::kGlm52;
}

// The layer's weights, owned, and a MoeLayerWeights pointing into them.
struct LayerTensors {
  std::vector<float> gate;
  std::vector<float> bias;
  std::vector<float> bias_vl;
  std::vector<std::int32_t> table;
  std::vector<float> gate_up;  // [E, 2I, H]: rows [0, I) gate_proj, [I, 2I) up_proj
  std::vector<float> down;     // [E, H, I]
  std::vector<float> shared_gate, shared_up, shared_down;
  MoeLayerWeights weights;
};

void load_layer(Fixture const& f, LayerTensors& l) {
  std::int64_t const h = f.meta_int("hidden");
  std::int64_t const inter = f.meta_int("intermediate");
  std::int64_t const e = f.meta_int("num_experts");
  std::int64_t const k = f.meta_int("top_k");
  std::int64_t const shared_inter = f.meta_int("shared_intermediate");
  l.gate = f.floats("gate.weight", {e, h});
  if (f.meta_int("hash_layer") != 0) {
    CHECK_FALSE(f.has("gate.e_score_correction_bias"));  // hash layers have no bias tensor
    l.table = f.ints("gate.tid2eid", {f.meta_int("hash_vocab"), k});
  } else {
    l.bias = f.floats("gate.e_score_correction_bias", {e});
  }
  if (f.has("gate.e_score_correction_bias_vl")) {
    l.bias_vl = f.floats("gate.e_score_correction_bias_vl", {e});
  }
  l.gate_up = f.floats("experts.gate_up_proj", {e, 2 * inter, h});
  l.down = f.floats("experts.down_proj", {e, h, inter});
  l.shared_gate = f.floats("shared_experts.gate_proj.weight", {shared_inter, h});
  l.shared_up = f.floats("shared_experts.up_proj.weight", {shared_inter, h});
  l.shared_down = f.floats("shared_experts.down_proj.weight", {h, shared_inter});

  auto const hs = static_cast<std::size_t>(h);
  auto const is = static_cast<std::size_t>(inter);
  std::span<float const> const gate_up = l.gate_up;
  std::span<float const> const down = l.down;
  l.weights.gate_weight = l.gate;
  l.weights.bias = l.bias;
  l.weights.bias_vl = l.bias_vl;
  l.weights.hash_table = l.table;
  for (std::size_t x = 0; x < static_cast<std::size_t>(e); ++x) {
    std::span<float const> const rows = gate_up.subspan(x * 2 * is * hs, 2 * is * hs);
    l.weights.experts.push_back({.hidden = h,
                                 .intermediate = inter,
                                 .gate = rows.first(is * hs),
                                 .up = rows.subspan(is * hs, is * hs),
                                 .down = down.subspan(x * hs * is, hs * is)});
  }
  l.weights.shared = DenseExpertWeights{.hidden = h,
                                        .intermediate = shared_inter,
                                        .gate = l.shared_gate,
                                        .up = l.shared_up,
                                        .down = l.shared_down};
}

// The family's semantics must be the ones the fixture's config describes.
void check_semantics(Fixture const& f, MoeLayerConfig const& c) {
  INFO(f.label);
  std::string const& scoring = f.meta("scoring_func");
  CHECK(c.router.score ==
        (scoring == "sigmoid" ? RouterScore::kSigmoid : RouterScore::kSqrtSoftplus));
  CHECK((scoring == "sigmoid" || scoring == "sqrtsoftplus"));
  CHECK(c.router.routed_scaling == f.meta_float("routed_scaling_factor"));
  CHECK(c.router.renormalize == (f.meta_int("norm_topk_prob") != 0));
  CHECK(c.router.gate_temperature == f.meta_float("gate_temp"));
  CHECK(c.expert.swiglu_limit == f.meta_float("swiglu_limit"));
}

std::vector<int> cases_of(Fixture const& f) {
  std::vector<int> out;
  std::string const& list = f.meta("cases");
  std::size_t at = 0;
  while (at < list.size()) {
    std::size_t const comma = std::min(list.find(',', at), list.size());
    out.push_back(std::stoi(list.substr(at, comma - at)));
    at = comma + 1;
  }
  return out;
}

void check_fixture(std::filesystem::path const& path) {
  Fixture const f = open_fixture(path);
  REQUIRE(f.meta("format") == "gcmoe-moe-golden-v1");
  MoeFamily const family = family_of(f.meta("family"));
  std::int32_t const h = f.meta_int("hidden");
  std::int32_t const e = f.meta_int("num_experts");
  std::int32_t const k = f.meta_int("top_k");
  bool const hashed = f.meta_int("hash_layer") != 0;
  std::printf("%s: %s (%s), transformers %s, H=%d I=%d E=%d k=%d\n", f.label.c_str(),
              f.meta("module").c_str(), f.meta("router_module").c_str(),
              f.meta("transformers_version").c_str(), h, f.meta_int("intermediate"), e, k);

  LayerTensors layer;
  load_layer(f, layer);
  MoeLayerConfig const bf16_out =
      moe_layer_config(family, h, f.meta_int("intermediate"), e, k, /*fp8_activations=*/false);
  check_semantics(f, bf16_out);
  MoeLayerConfig fp32_out = bf16_out;
  fp32_out.round_output_to_bf16 = false;

  auto const es = static_cast<std::size_t>(e);
  auto const ks = static_cast<std::size_t>(k);
  for (int const t : cases_of(f)) {
    std::string const prefix = "case.t" + std::to_string(t) + ".";
    INFO(f.label << " T=" << t);
    auto const ts = static_cast<std::size_t>(t);
    std::vector<float> const x = f.floats(prefix + "x", {t, h});
    std::vector<float> const want_out = f.floats(prefix + "out", {t, h});
    std::vector<float> const logits = f.floats(prefix + "router_logits", {t, e});
    std::vector<std::int32_t> const want_ids = f.ints(prefix + "topk_ids", {t, k});
    std::vector<float> const want_w = f.floats(prefix + "topk_weights", {t, k});
    std::vector<std::int32_t> token_ids;
    if (hashed) {
      token_ids = f.ints(prefix + "token_ids", {t});
    }
    std::vector<std::uint8_t> image_mask;
    if (f.has(prefix + "image_mask")) {
      for (std::int32_t const m : f.ints(prefix + "image_mask", {t})) {
        image_mask.push_back(static_cast<std::uint8_t>(m != 0));
      }
    }

    auto const exact = moe_layer_ref(fp32_out, layer.weights, x, token_ids, image_mask);
    REQUIRE(exact.ok());
    RouterRefResult const& routing = exact->routing;

    // Selection scores: ours from our logits, transformers' from its logits, same bias.
    double max_sel_diff = 0.0;
    for (std::size_t i = 0; i < ts; ++i) {
      bool const image = !image_mask.empty() && image_mask[i] != 0;
      std::vector<float> const& bias = image ? layer.bias_vl : layer.bias;
      for (std::size_t x_e = 0; x_e < es; ++x_e) {
        float const s = router_score(bf16_out.router.score, logits[i * es + x_e]);
        float const sel = bias.empty() ? s : s + bias[x_e];
        max_sel_diff = std::max(
            max_sel_diff, static_cast<double>(std::abs(sel - routing.selection[i * es + x_e])));
      }
    }
    CHECK(max_sel_diff < 2e-6);

    // Selected experts (as sets; hash layers in table order) and their weights.
    int mismatched_tokens = 0;
    double max_w_rel = 0.0;
    for (std::size_t i = 0; i < ts; ++i) {
      std::map<std::int32_t, float> ours;
      for (std::size_t j = 0; j < ks; ++j) {
        ours[routing.topk_ids[i * ks + j]] = routing.topk_weights[i * ks + j];
      }
      std::set<std::int32_t> const theirs(
          want_ids.begin() + static_cast<std::ptrdiff_t>(i * ks),
          want_ids.begin() + static_cast<std::ptrdiff_t>(i * ks + ks));
      bool same = theirs.size() == ks && ours.size() == ks;
      for (std::size_t j = 0; j < ks && same; ++j) {
        std::int32_t const id = want_ids[i * ks + j];
        auto const it = ours.find(id);
        same = it != ours.end() && (!hashed || routing.topk_ids[i * ks + j] == id);
        if (same) {
          float const w = want_w[i * ks + j];
          max_w_rel = std::max(max_w_rel, std::abs(static_cast<double>(it->second) - w) /
                                              std::abs(static_cast<double>(w)));
        }
      }
      mismatched_tokens += same ? 0 : 1;
    }
    CHECK(mismatched_tokens == 0);
    CHECK(max_w_rel < 2e-6);

    // The output at fp32 ...
    double const err_fp32 = testing::relative_l2_error(exact->out, want_out);
    CHECK(err_fp32 < 2e-6);

    // ... and the default bf16 output: each element within one bf16 rounding (at most 2^-8
    // relative: 8 significant bits) of transformers' fp32 value, plus the fp32 difference above.
    auto const rounded = moe_layer_ref(bf16_out, layer.weights, x, token_ids, image_mask);
    REQUIRE(rounded.ok());
    double const err_bf16 = testing::relative_l2_error(rounded->out, want_out);
    double rms = 0.0;
    for (float const v : want_out) {
      rms += static_cast<double>(v) * v;
    }
    rms = std::sqrt(rms / static_cast<double>(want_out.size()));
    int outside = 0;
    for (std::size_t i = 0; i < want_out.size(); ++i) {
      double const want = want_out[i];
      double const got = rounded->out[i];
      CHECK(static_cast<float>(got) ==
            formats::decode_bf16(formats::encode_bf16(static_cast<float>(got))));
      if (std::abs(got - want) > std::ldexp(1.0, -8) * std::abs(want) * 1.001 + 1e-6 * rms) {
        ++outside;
      }
    }
    CHECK(outside == 0);
    CHECK(err_bf16 < 4e-3);
    std::printf(
        "  T=%-2d selection max|diff| %.2e, experts mismatched in %d tokens, weights max rel "
        "%.2e, out rel_l2 fp32 %.2e, bf16 %.2e\n",
        t, max_sel_diff, mismatched_tokens, max_w_rel, err_fp32, err_bf16);
  }
}

TEST_CASE("MoE layer reference matches transformers' MoE blocks (golden fixtures)") {
  std::set<std::string> found;
  for (auto const& entry : std::filesystem::directory_iterator(fixture_dir())) {
    if (entry.path().extension() == ".safetensors") {
      found.insert(entry.path().stem().string());
    }
  }
  // deepseek_v41 joins when a transformers release has the module (see the script).
  for (char const* required : {"deepseek_v4", "deepseek_v4_hash", "glm_moe_dsa"}) {
    INFO("fixture " << required);
    CHECK(found.contains(required));
  }
  for (std::string const& name : found) {
    check_fixture(fixture_dir() / (name + ".safetensors"));
  }
}

}  // namespace
}  // namespace gcmoe::kernels
