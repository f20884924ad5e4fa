#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "engine/checkpoint/checkpoint.h"
#include "engine/checkpoint/safetensors_writer.h"
#include "tests/support/catch.h"
#include "tests/unit/checkpoint/temp_dir.h"

namespace gcmoe::checkpoint {
namespace {

struct Sample {
  std::string name;
  DType dtype;
  std::vector<std::int64_t> shape;
  std::vector<std::byte> bytes;
};

std::vector<std::byte> random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::byte> out(n);
  for (auto& b : out) {
    b = static_cast<std::byte>(rng() & 0xffU);
  }
  return out;
}

// One tensor of every supported dtype, with odd shapes, a scalar and an empty tensor.
std::vector<Sample> samples() {
  std::vector<Sample> out;
  std::uint64_t seed = 11;
  auto const add = [&](std::string name, DType dtype, std::vector<std::int64_t> shape) {
    std::int64_t elements = 1;
    for (std::int64_t const d : shape) {
      elements *= d;
    }
    auto const size = static_cast<std::size_t>(elements * dtype_size(dtype));
    out.push_back(Sample{std::move(name), dtype, std::move(shape), random_bytes(size, seed++)});
  };
  add("embed.weight", DType::kBf16, {17, 8});
  add("layers.0.attn.attn_sink", DType::kF32, {5});
  add("layers.0.ffn.gate.tid2eid", DType::kI64, {9, 6});
  add("layers.0.ffn.experts.0.w1.weight", DType::kI8, {4, 16});
  add("layers.0.ffn.experts.0.w1.raw", DType::kU8, {3, 3, 3});
  add("layers.0.attn.wq_a.weight", DType::kF8E4M3, {64, 96});
  add("layers.0.attn.wq_a.scale", DType::kF8E8M0, {2, 3});
  add("hc_head_scale", DType::kF32, {});
  add("empty", DType::kBf16, {0, 4});
  return out;
}

SafetensorsWriter writer_of(std::vector<Sample> const& tensors) {
  SafetensorsWriter writer;
  for (Sample const& s : tensors) {
    REQUIRE(writer.add(s.name, s.dtype, s.shape, s.bytes).ok());
  }
  return writer;
}

void check_all(Checkpoint const& checkpoint, std::vector<Sample> const& tensors) {
  CHECK(checkpoint.layout().tensor_count() == tensors.size());
  for (Sample const& s : tensors) {
    INFO(s.name);
    auto const view = checkpoint.tensor(s.name);
    REQUIRE(view.ok());
    CHECK(view->name == s.name);
    CHECK(view->dtype == s.dtype);
    CHECK(std::vector<std::int64_t>(view->shape.begin(), view->shape.end()) == s.shape);
    REQUIRE(view->bytes.size() == s.bytes.size());
    CHECK(std::equal(view->bytes.begin(), view->bytes.end(), s.bytes.begin()));
  }
}

TEST_CASE("dtype names round trip and unknown names are refused") {
  for (DType const dtype : {DType::kBf16, DType::kF32, DType::kI64, DType::kI8, DType::kU8,
                            DType::kF8E4M3, DType::kF8E8M0}) {
    auto const parsed = dtype_from_name(dtype_name(dtype));
    REQUIRE(parsed.ok());
    CHECK(*parsed == dtype);
  }
  CHECK(dtype_size(DType::kI64) == 8);
  CHECK(dtype_size(DType::kBf16) == 2);
  auto const f16 = dtype_from_name("F16");
  CHECK(f16.status().code() == StatusCode::kInvalidArgument);
  CHECK(f16.status().message().find("'F16'") != std::string::npos);
}

TEST_CASE("a single file written by the writer reads back bit for bit") {
  testing::TempDir const dir;
  auto const tensors = samples();
  SafetensorsWriter const writer = writer_of(tensors);
  REQUIRE(writer.write_file(dir.path() / kSingleFileName).ok());

  auto const header = read_safetensors_header(dir.path() / kSingleFileName);
  REQUIRE(header.ok());
  CHECK(header->metadata.at("format") == "pt");
  CHECK(header->data_offset % 8 == 0);

  auto const checkpoint = Checkpoint::open(dir.path());
  REQUIRE(checkpoint.ok());
  CHECK(checkpoint->layout().shards().size() == 1);
  check_all(*checkpoint, tensors);
  CHECK(checkpoint->tensor("missing").status().code() == StatusCode::kNotFound);
}

TEST_CASE("sharded checkpoints split by size and read back through the index") {
  testing::TempDir const dir;
  auto const tensors = samples();
  SafetensorsWriter const writer = writer_of(tensors);
  // 6,144 bytes of FP8 weight is the largest tensor; 2 KB shards force several files.
  REQUIRE(writer.write_sharded(dir.path(), 2048).ok());
  CHECK(std::filesystem::exists(dir.path() / kIndexFileName));
  CHECK(std::filesystem::exists(dir.path() / "model-00001-of-00003.safetensors"));

  auto const checkpoint = Checkpoint::open(dir.path());
  REQUIRE(checkpoint.ok());
  CHECK(checkpoint->layout().shards().size() == 3);
  check_all(*checkpoint, tensors);

  std::size_t viewed = 0;
  for (std::size_t shard = 0; shard < checkpoint->layout().shards().size(); ++shard) {
    viewed += checkpoint->shard_tensors(shard).size();
  }
  CHECK(viewed == tensors.size());
}

TEST_CASE("the writer refuses inconsistent tensors") {
  SafetensorsWriter writer;
  std::vector<std::byte> const four(4);
  CHECK(writer.add("a", DType::kF32, {1}, four).ok());
  CHECK(writer.add("a", DType::kF32, {1}, four).code() == StatusCode::kInvalidArgument);
  Status const wrong_size = writer.add("b", DType::kBf16, {3}, four);
  CHECK(wrong_size.code() == StatusCode::kInvalidArgument);
  CHECK(wrong_size.message().find("needs 6 bytes") != std::string::npos);
  CHECK(writer.add("__metadata__", DType::kU8, {4}, four).code() == StatusCode::kInvalidArgument);
  CHECK(writer.add("c", DType::kU8, {-4}, four).code() == StatusCode::kInvalidArgument);
  CHECK(writer.tensor_count() == 1);
}

}  // namespace
}  // namespace gcmoe::checkpoint
