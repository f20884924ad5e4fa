// Values of the tiny checkpoints: dequantized weights have the intended magnitudes, routing
// tables and biases are valid, and the same seed gives byte-identical files.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "engine/checkpoint/checkpoint.h"
#include "engine/formats/bf16.h"
#include "engine/formats/e8m0.h"
#include "engine/formats/fp8_block.h"
#include "engine/formats/mxfp4.h"
#include "tests/unit/tiny/tiny_test_support.h"

namespace gcmoe::tiny {
namespace {

using checkpoint::DType;
using config::ModelFamily;
using testing::written_model;

template <typename T>
std::vector<T> copy_as(std::span<std::byte const> bytes) {
  std::vector<T> out(bytes.size() / sizeof(T));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));  // mmap data may be unaligned
  return out;
}

checkpoint::TensorView get(checkpoint::Checkpoint const& ckpt, std::string const& name) {
  auto view = ckpt.tensor(name);
  INFO(name << ": " << view.status().to_string());
  REQUIRE(view.ok());
  return *view;
}

// fp32 values of a stored weight, dequantized by its dtype and scale sibling.
std::vector<float> dequantized(checkpoint::Checkpoint const& ckpt, std::string const& prefix,
                               std::string const& scale_suffix, formats::BlockShape block) {
  checkpoint::TensorView const w = get(ckpt, prefix + ".weight");
  std::vector<float> out;
  if (w.dtype == DType::kBf16) {
    for (std::uint16_t const bits : copy_as<std::uint16_t>(w.bytes)) {
      out.push_back(formats::decode_bf16(bits));
    }
    return out;
  }
  checkpoint::TensorView const s = get(ckpt, prefix + scale_suffix);
  auto const codes = copy_as<std::uint8_t>(w.bytes);
  if (w.dtype == DType::kI8) {
    formats::MatrixDims const dims{w.shape[0], 2 * w.shape[1]};
    out.resize(static_cast<std::size_t>(dims.elements()));
    REQUIRE(formats::dequantize_mxfp4(codes, copy_as<std::uint8_t>(s.bytes), dims, out).ok());
    return out;
  }
  formats::MatrixDims const dims{w.shape[0], w.shape[1]};
  out.resize(static_cast<std::size_t>(dims.elements()));
  if (s.dtype == DType::kF32) {
    REQUIRE(formats::dequantize_fp8_f32(codes, copy_as<float>(s.bytes), dims, block, out).ok());
  } else {
    REQUIRE(
        formats::dequantize_fp8_e8m0(codes, copy_as<std::uint8_t>(s.bytes), dims, block, out).ok());
  }
  return out;
}

struct Moments {
  double mean = 0.0;
  double stddev = 0.0;
};

Moments moments(std::vector<float> const& v) {
  double sum = 0.0;
  double sq = 0.0;
  for (float const x : v) {
    sum += x;
    sq += static_cast<double>(x) * x;
  }
  double const n = static_cast<double>(v.size());
  return {sum / n, std::sqrt(sq / n - (sum / n) * (sum / n))};
}

// Linear weights are drawn N(0, 0.02) and quantized with the release recipe: their dequantized
// std stays within 3% of 0.02 (sampling error ~0.5% at these sizes, MXFP4 rounding adds ~1%).
void check_weight_std(std::vector<float> const& values, std::string const& what) {
  Moments const m = moments(values);
  INFO(what << ": " << values.size() << " values, mean " << m.mean << " std " << m.stddev);
  REQUIRE(values.size() > 10000);
  CHECK(std::fabs(m.stddev - 0.02) < 0.02 * 0.03);
  CHECK(std::fabs(m.mean) < 0.001);
}

std::vector<float> concat_experts(checkpoint::Checkpoint const& ckpt, std::string const& pattern,
                                  int const experts, std::string const& scale_suffix,
                                  formats::BlockShape const block) {
  std::vector<float> all;
  for (int e = 0; e < experts; ++e) {
    std::vector<float> const w =
        dequantized(ckpt, fmt::format(fmt::runtime(pattern), e), scale_suffix, block);
    all.insert(all.end(), w.begin(), w.end());
  }
  return all;
}

TEST_CASE("tiny GLM-5.2 weights: FP8 with f32 scales at std 0.02, biases near 7, norms near 1") {
  auto const ckpt =
      checkpoint::Checkpoint::open(written_model(ModelFamily::kGlmMoeDsa).dir->path());
  REQUIRE(ckpt.ok());
  check_weight_std(concat_experts(*ckpt, "model.layers.2.mlp.experts.{}.gate_proj", 16,
                                  ".weight_scale_inv", formats::kBlock128),
                   "layer 2 expert gate_proj");
  check_weight_std(
      dequantized(*ckpt, "model.layers.0.mlp.down_proj", ".weight_scale_inv", formats::kBlock128),
      "dense down_proj");
  check_weight_std(dequantized(*ckpt, "model.embed_tokens", "", {}), "embedding (BF16)");
  auto const bias =
      copy_as<float>(get(*ckpt, "model.layers.1.mlp.gate.e_score_correction_bias").bytes);
  CHECK(std::all_of(bias.begin(), bias.end(), [](float b) { return b >= 6.82f && b < 7.06f; }));
  Moments const norm = moments(dequantized(*ckpt, "model.norm", "", {}));
  CHECK(std::fabs(norm.mean - 1.0) < 0.02);
  auto const scales =
      copy_as<float>(get(*ckpt, "model.layers.1.self_attn.o_proj.weight_scale_inv").bytes);
  for (float const s : scales) {
    CHECK(s > 0.05f / 448.0f);  // amax of 16K N(0, 0.02) draws is ~0.08
    CHECK(s < 0.15f / 448.0f);
  }
}

TEST_CASE("tiny DeepSeek-V4 weights: MXFP4 experts, e8m0 FP8, valid hash tables") {
  auto const ckpt =
      checkpoint::Checkpoint::open(written_model(ModelFamily::kDeepseekV4).dir->path());
  REQUIRE(ckpt.ok());
  check_weight_std(concat_experts(*ckpt, "layers.2.ffn.experts.{}.w1", 16, ".scale", {}),
                   "layer 2 expert w1 (MXFP4)");
  check_weight_std(dequantized(*ckpt, "layers.0.attn.wq_b", ".scale", formats::kBlock128),
                   "wq_b (FP8, e8m0 128x128)");
  for (std::uint8_t const byte :
       copy_as<std::uint8_t>(get(*ckpt, "layers.2.ffn.experts.3.w2.scale").bytes)) {
    CHECK(byte != formats::kE8m0NanCode);
    CHECK(formats::decode_e8m0(byte) * 6.0f >= 0.02f);  // the block amax fits under 6 * scale
  }
  for (char const* name : {"layers.0.ffn.gate.tid2eid", "layers.1.ffn.gate.tid2eid"}) {
    auto const table = copy_as<std::int64_t>(get(*ckpt, name).bytes);
    REQUIRE(table.size() == 1024 * 4);
    std::set<std::int64_t> used;
    for (std::size_t row = 0; row < 1024; ++row) {
      std::set<std::int64_t> const ids(table.begin() + static_cast<std::ptrdiff_t>(row * 4),
                                       table.begin() + static_cast<std::ptrdiff_t>(row * 4 + 4));
      CHECK(ids.size() == 4);  // distinct experts per token
      CHECK(*ids.begin() >= 0);
      CHECK(*ids.rbegin() < 16);
      used.insert(ids.begin(), ids.end());
    }
    CHECK(used.size() == 16);
  }
}

TEST_CASE("tiny DeepSeek-V4.1 weights: 32x32 e8m0 FP8, 1x32 Engram rows, MXFP4 experts") {
  auto const ckpt =
      checkpoint::Checkpoint::open(written_model(ModelFamily::kDeepseekV41).dir->path());
  REQUIRE(ckpt.ok());
  check_weight_std(dequantized(*ckpt, "layers.1.engram.wkv", ".scale", formats::kBlock32),
                   "engram wkv (FP8, e8m0 32x32)");
  check_weight_std(dequantized(*ckpt, "layers.1.engram.embed", ".scale", {1, 32}),
                   "engram table (FP8, e8m0 1x32)");
  check_weight_std(concat_experts(*ckpt, "mtp.0.ffn.experts.{}.w2", 8, ".scale", {}),
                   "DSpark expert w2 (MXFP4)");
  check_weight_std(
      concat_experts(*ckpt, "layers.{}.ffn.shared_experts.w1", 6, ".scale", formats::kBlock32),
      "shared experts w1 (FP8, e8m0 32x32)");
}

std::string file_bytes(std::filesystem::path const& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_CASE("the same seed gives byte-identical checkpoints, another seed other weights") {
  for (ModelFamily const family :
       {ModelFamily::kGlmMoeDsa, ModelFamily::kDeepseekV4, ModelFamily::kDeepseekV41}) {
    auto const& first = written_model(family);
    testing::TempDir const again("again");
    REQUIRE(write_tiny_model(tiny_config_json(family), again.path(), testing::kTestSeed).ok());
    std::size_t files = 0;
    for (auto const& entry : std::filesystem::directory_iterator(first.dir->path())) {
      INFO(config::model_family_name(family) << " " << entry.path().filename().string());
      CHECK(file_bytes(entry.path()) == file_bytes(again.path() / entry.path().filename()));
      ++files;
    }
    CHECK(files == static_cast<std::size_t>(first.summary.shards) + 2);  // + config, index
  }
  // Another seed: same headers (config, index, tensor list), different data in every shard.
  auto const& first = written_model(ModelFamily::kGlmMoeDsa);
  testing::TempDir const other("other");
  REQUIRE(write_tiny_model(tiny_config_json(ModelFamily::kGlmMoeDsa), other.path(),
                           testing::kTestSeed + 1)
              .ok());
  CHECK(testing::read_headers(other.path()).size() ==
        testing::read_headers(first.dir->path()).size());
  for (auto const& entry : std::filesystem::directory_iterator(first.dir->path())) {
    auto const name = entry.path().filename();
    INFO(name.string());
    bool const shard = name.extension() == ".safetensors";
    CHECK((file_bytes(other.path() / name) == file_bytes(entry.path())) == !shard);
  }
}

}  // namespace
}  // namespace gcmoe::tiny
