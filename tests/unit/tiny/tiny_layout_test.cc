// The header set of each family's tiny checkpoint follows the release layout rules of
// model-spec §3: names, dtypes, scale siblings and their shapes, and per-layer structure.
#include <map>
#include <string>
#include <vector>

#include "engine/checkpoint/dtype.h"
#include "tests/unit/tiny/tiny_test_support.h"

namespace gcmoe::tiny {
namespace {

using checkpoint::DType;
using config::ModelFamily;
using testing::ends_with;
using testing::HeaderEntry;
using testing::read_headers;
using testing::starts_with;
using testing::written_model;
using Shape = std::vector<std::int64_t>;

std::int64_t ceil_div(std::int64_t const a, std::int64_t const b) {
  return (a + b - 1) / b;
}

std::string strip(std::string const& name, std::string const& suffix) {
  return name.substr(0, name.size() - suffix.size());
}

// Every quantized weight has exactly the scale sibling its format implies, and every scale has a
// weight: FP8 [out, in] -> [ceil(out/B), ceil(in/B)]; I8 (MXFP4) [out, in/2] -> [out, in/32].
void check_scale_siblings(std::map<std::string, HeaderEntry> const& headers,
                          std::string const& scale_suffix, DType const scale_dtype,
                          std::int64_t const block) {
  int fp8 = 0;
  int mxfp4 = 0;
  for (auto const& [name, entry] : headers) {
    if (ends_with(name, ".scale") || ends_with(name, ".weight_scale_inv")) {
      INFO(name);
      CHECK(ends_with(name, scale_suffix));
      CHECK(entry.dtype == scale_dtype);
      CHECK(headers.count(strip(name, scale_suffix) + ".weight") == 1);
      continue;
    }
    if (entry.dtype != DType::kF8E4M3 && entry.dtype != DType::kI8) {
      continue;
    }
    INFO(name);
    REQUIRE(ends_with(name, ".weight"));
    auto const scale = headers.find(strip(name, ".weight") + scale_suffix);
    REQUIRE(scale != headers.end());
    Shape const& w = entry.shape;
    REQUIRE(w.size() == 2);
    if (entry.dtype == DType::kI8) {
      CHECK(scale->second.dtype == DType::kF8E8M0);
      CHECK(scale->second.shape == Shape{w[0], 2 * w[1] / 32});
      ++mxfp4;
    } else if (ends_with(name, "engram.embed.weight")) {
      CHECK(scale->second.shape == Shape{w[0], ceil_div(w[1], 32)});  // Engram rows: 1x32
    } else {
      CHECK(scale->second.shape == Shape{ceil_div(w[0], block), ceil_div(w[1], block)});
      ++fp8;
    }
  }
  CHECK(fp8 > 10);
  if (scale_suffix == ".scale") {
    CHECK(mxfp4 > 100);  // DeepSeek routed experts
  }
}

void check_tensor(std::map<std::string, HeaderEntry> const& headers, std::string const& name,
                  DType const dtype, Shape const& shape) {
  INFO(name);
  auto const it = headers.find(name);
  REQUIRE(it != headers.end());
  CHECK(it->second.dtype == dtype);
  CHECK(it->second.shape == shape);
}

TEST_CASE("tiny GLM-5.2 checkpoint has the GLM-5.2-FP8 layout") {
  auto const& model = written_model(ModelFamily::kGlmMoeDsa);
  auto const headers = read_headers(model.dir->path());
  CHECK(model.summary.shards >= 3);
  // Per layer: 2 norms + 12 attention (5 FP8 pairs, 2 norms) + 7 indexer on "full" layers, then
  // the dense MLP (3 pairs) or the MoE (gate + bias + 16 experts × 3 pairs + shared 3 pairs).
  // Layers: 0 dense full, 1-2 MoE full, 3 MoE shared, 4 MTP (full, + enorm/hnorm/eh_proj/
  // shared_head.norm); plus embed, norm, lm_head.
  std::size_t const expected = 3 + (2 + 12 + 7 + 6) + 2 * (2 + 12 + 7 + 2 + 96 + 6) +
                               (2 + 12 + 2 + 96 + 6) + (2 + 12 + 7 + 2 + 96 + 6 + 4);
  CHECK(headers.size() == expected);
  CHECK(model.summary.tensors == expected);
  check_scale_siblings(headers, ".weight_scale_inv", DType::kF32, 128);
  for (auto const& [name, entry] : headers) {
    INFO(name);
    CHECK((starts_with(name, "model.") || name == "lm_head.weight"));
  }
  check_tensor(headers, "model.embed_tokens.weight", DType::kBf16, {1024, 256});
  check_tensor(headers, "lm_head.weight", DType::kBf16, {1024, 256});
  check_tensor(headers, "model.layers.0.mlp.gate_proj.weight", DType::kF8E4M3, {512, 256});
  check_tensor(headers, "model.layers.0.mlp.down_proj.weight_scale_inv", DType::kF32, {2, 4});
  check_tensor(headers, "model.layers.0.self_attn.kv_a_proj_with_mqa.weight", DType::kF8E4M3,
               {64 + 16, 256});
  check_tensor(headers, "model.layers.0.self_attn.kv_b_proj.weight", DType::kF8E4M3,
               {4 * (32 + 32), 64});
  check_tensor(headers, "model.layers.2.self_attn.indexer.weights_proj.weight", DType::kBf16,
               {4, 256});
  check_tensor(headers, "model.layers.2.self_attn.indexer.k_norm.bias", DType::kBf16, {32});
  CHECK(headers.count("model.layers.3.self_attn.indexer.wq_b.weight") == 0);  // shared layer
  check_tensor(headers, "model.layers.1.mlp.gate.e_score_correction_bias", DType::kF32, {16});
  check_tensor(headers, "model.layers.1.mlp.gate.weight", DType::kBf16, {16, 256});
  check_tensor(headers, "model.layers.3.mlp.experts.15.down_proj.weight", DType::kF8E4M3,
               {256, 128});
  check_tensor(headers, "model.layers.3.mlp.experts.15.down_proj.weight_scale_inv", DType::kF32,
               {2, 1});
  check_tensor(headers, "model.layers.4.eh_proj.weight", DType::kBf16, {256, 512});
  check_tensor(headers, "model.layers.4.self_attn.indexer.wk.weight", DType::kF8E4M3, {32, 256});
  CHECK(headers.count("model.layers.1.mlp.experts.16.gate_proj.weight") == 0);
  CHECK(headers.count("model.layers.0.mlp.experts.0.gate_proj.weight") == 0);  // dense layer
}

TEST_CASE("tiny DeepSeek-V4 checkpoint has the V4-Flash layout") {
  auto const& model = written_model(ModelFamily::kDeepseekV4);
  auto const headers = read_headers(model.dir->path());
  // Block: 2 norms + 6 hc + 13 attention + gate + (tid2eid | bias) + 16 experts × 6 + shared 6;
  // ratio > 0 adds a compressor (4), ratio 4 an indexer (7). Ratios 0,0,4,128,4; MTP (ratio 0)
  // adds e_proj/h_proj pairs, enorm, hnorm, norm, hc_head ×3; top: embed, head, norm, hc_head ×3.
  std::size_t const block = 2 + 6 + 13 + 2 + 96 + 6;
  std::size_t const expected = 5 * block + 3 * 4 + 2 * 7 + (block + 10) + 6;
  CHECK(headers.size() == expected);
  check_scale_siblings(headers, ".scale", DType::kF8E8M0, 128);
  for (auto const& [name, entry] : headers) {
    INFO(name);
    CHECK_FALSE(starts_with(name, "model."));
  }
  check_tensor(headers, "layers.0.ffn.gate.tid2eid", DType::kI64, {1024, 4});
  check_tensor(headers, "layers.1.ffn.gate.tid2eid", DType::kI64, {1024, 4});
  CHECK(headers.count("layers.1.ffn.gate.bias") == 0);  // hash layers have no bias
  check_tensor(headers, "layers.2.ffn.gate.bias", DType::kF32, {16});
  CHECK(headers.count("layers.2.ffn.gate.tid2eid") == 0);
  check_tensor(headers, "layers.1.ffn.experts.0.w1.weight", DType::kI8, {128, 128});
  check_tensor(headers, "layers.1.ffn.experts.0.w1.scale", DType::kF8E8M0, {128, 8});
  check_tensor(headers, "layers.1.ffn.experts.0.w2.weight", DType::kI8, {256, 64});
  check_tensor(headers, "layers.1.ffn.experts.0.w2.scale", DType::kF8E8M0, {256, 4});
  check_tensor(headers, "layers.4.ffn.shared_experts.w3.weight", DType::kF8E4M3, {128, 256});
  check_tensor(headers, "layers.0.attn.wkv.scale", DType::kF8E8M0, {1, 2});
  check_tensor(headers, "layers.0.attn.wo_a.weight", DType::kF8E4M3, {2 * 64, 4 * 64 / 2});
  check_tensor(headers, "layers.0.attn.attn_sink", DType::kF32, {4});
  check_tensor(headers, "layers.0.hc_attn_fn", DType::kF32, {24, 1024});
  check_tensor(headers, "layers.0.hc_ffn_scale", DType::kF32, {3});
  CHECK(headers.count("layers.0.attn.compressor.wkv.weight") == 0);
  check_tensor(headers, "layers.2.attn.compressor.wkv.weight", DType::kBf16, {128, 256});
  check_tensor(headers, "layers.2.attn.compressor.ape", DType::kF32, {4, 128});
  check_tensor(headers, "layers.3.attn.compressor.ape", DType::kF32, {128, 64});
  CHECK(headers.count("layers.3.attn.indexer.wq_b.weight") == 0);  // HCA: no indexer
  check_tensor(headers, "layers.4.attn.indexer.compressor.ape", DType::kF32, {4, 64});
  check_tensor(headers, "layers.4.attn.indexer.wq_b.scale", DType::kF8E8M0, {1, 1});
  check_tensor(headers, "mtp.0.e_proj.scale", DType::kF8E8M0, {2, 2});
  check_tensor(headers, "mtp.0.ffn.gate.bias", DType::kF32, {16});
  check_tensor(headers, "mtp.0.hc_head_fn", DType::kF32, {4, 1024});
  check_tensor(headers, "hc_head_scale", DType::kF32, {1});
  check_tensor(headers, "embed.weight", DType::kBf16, {1024, 256});
}

TEST_CASE("tiny DeepSeek-V4.1 checkpoint has the V4.1-Flash layout") {
  auto const& model = written_model(ModelFamily::kDeepseekV41);
  auto const headers = read_headers(model.dir->path());
  // Trunk block: 2 norms + 6 hc + 13 attention + gate/bias/bias_vl + 16 × 6 + shared 6; layer 2
  // adds compressor (wkv, wgate, norm) + indexer (wq_b pair, weights_proj, wk, k_norm), layer 4
  // compressor (wkv, norm) + the same indexer, layer 5 indexer without wk/k_norm, layer 1 Engram
  // (embed pair, wkv pair, q/k weights). DSpark blocks: 8 experts, gate + bias; stage 0 adds
  // main_proj pair + main_norm, stage 2 norm + markov embed/head + confidence. Top: 3.
  std::size_t const trunk = 2 + 6 + 13 + 3 + 96 + 6;
  std::size_t const dspark = 2 + 6 + 13 + 2 + 48 + 6;
  std::size_t const expected = 6 * trunk + 8 + 7 + 3 + 6 + 3 * dspark + 3 + 4 + 3;
  CHECK(headers.size() == expected);
  check_scale_siblings(headers, ".scale", DType::kF8E8M0, 32);
  check_tensor(headers, "layers.0.attn.wq_a.weight", DType::kF8E4M3, {160, 256});
  check_tensor(headers, "layers.0.attn.wq_a.scale", DType::kF8E8M0, {5, 8});
  check_tensor(headers, "layers.5.ffn.experts.15.w2.weight", DType::kI8, {256, 48});
  check_tensor(headers, "layers.5.ffn.experts.15.w2.scale", DType::kF8E8M0, {256, 3});
  check_tensor(headers, "layers.3.ffn.gate.bias_vl", DType::kF32, {16});
  check_tensor(headers, "layers.0.ffn.shared_experts.w2.scale", DType::kF8E8M0, {8, 3});
  check_tensor(headers, "layers.2.attn.compressor.wgate.weight", DType::kBf16, {64, 256});
  CHECK(headers.count("layers.4.attn.compressor.wgate.weight") == 0);  // ratio 1: no gate
  CHECK(headers.count("layers.3.attn.compressor.wkv.weight") == 0);    // not a kv source
  CHECK(headers.count("layers.2.attn.compressor.ape") == 0);           // V4.1: no ape
  check_tensor(headers, "layers.4.attn.indexer.wk.weight", DType::kBf16, {32, 64});
  CHECK(headers.count("layers.5.attn.indexer.wk.weight") == 0);
  check_tensor(headers, "layers.5.attn.indexer.wq_b.scale", DType::kF8E8M0, {4, 5});
  std::int64_t const rows = engram_table_rows(128, 24, 1)[0];
  check_tensor(headers, "layers.1.engram.embed.weight", DType::kF8E4M3, {rows, 32});
  check_tensor(headers, "layers.1.engram.embed.scale", DType::kF8E8M0, {rows, 1});
  check_tensor(headers, "layers.1.engram.wkv.weight", DType::kF8E4M3, {5 * 256, 24 * 32});
  check_tensor(headers, "layers.1.engram.q_weight", DType::kBf16, {4, 256});
  check_tensor(headers, "mtp.0.main_proj.weight", DType::kF8E4M3, {256, 768});
  check_tensor(headers, "mtp.0.main_proj.scale", DType::kF8E8M0, {8, 24});
  check_tensor(headers, "mtp.1.ffn.experts.7.w1.weight", DType::kI8, {96, 128});
  CHECK(headers.count("mtp.1.ffn.experts.8.w1.weight") == 0);
  CHECK(headers.count("mtp.1.ffn.gate.bias_vl") == 0);
  check_tensor(headers, "mtp.2.markov_head.embed.weight", DType::kBf16, {1024, 32});
  check_tensor(headers, "mtp.2.confidence_head.proj.weight", DType::kBf16, {1, 256 + 32});
  CHECK(headers.count("hc_head_fn") == 0);  // V4.1 has no hc_head
  CHECK(headers.count("vision.patch_embed.weight") == 0);
}

}  // namespace
}  // namespace gcmoe::tiny
