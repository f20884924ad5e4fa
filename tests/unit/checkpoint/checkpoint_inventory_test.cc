#include "engine/checkpoint/checkpoint_inventory.h"

#include <string>
#include <vector>

#include "engine/checkpoint/safetensors_writer.h"
#include "tests/support/catch.h"
#include "tests/unit/checkpoint/temp_dir.h"

namespace gcmoe::checkpoint {
namespace {

Status add_zeros(SafetensorsWriter& writer, std::string const& name, DType dtype,
                 std::vector<std::int64_t> const& shape) {
  std::int64_t elements = 1;
  for (std::int64_t const d : shape) {
    elements *= d;
  }
  std::vector<std::byte> const bytes(static_cast<std::size_t>(elements * dtype_size(dtype)));
  return writer.add(name, dtype, shape, bytes);
}

// V4-style names: 2 MoE layers of 4 MXFP4 experts (w1/w3 I8 [8,16] + e8m0 [8,1], w2 I8 [32,4] +
// [32,1]), a shared expert and an embedding that every rank replicates.
SafetensorsWriter tiny_moe(int experts) {
  SafetensorsWriter writer;
  REQUIRE(add_zeros(writer, "embed.weight", DType::kBf16, {16, 32}).ok());
  for (int layer = 0; layer < 2; ++layer) {
    std::string const ffn = "layers." + std::to_string(layer) + ".ffn.";
    REQUIRE(add_zeros(writer, ffn + "shared_experts.w1.weight", DType::kF8E4M3, {8, 32}).ok());
    for (int e = 0; e < experts; ++e) {
      std::string const expert = ffn + "experts." + std::to_string(e) + ".";
      REQUIRE(add_zeros(writer, expert + "w1.weight", DType::kI8, {8, 16}).ok());
      REQUIRE(add_zeros(writer, expert + "w1.scale", DType::kF8E8M0, {8, 1}).ok());
      REQUIRE(add_zeros(writer, expert + "w3.weight", DType::kI8, {8, 16}).ok());
      REQUIRE(add_zeros(writer, expert + "w3.scale", DType::kF8E8M0, {8, 1}).ok());
      REQUIRE(add_zeros(writer, expert + "w2.weight", DType::kI8, {32, 4}).ok());
      REQUIRE(add_zeros(writer, expert + "w2.scale", DType::kF8E8M0, {32, 1}).ok());
    }
  }
  return writer;
}

TEST_CASE("inventory splits routed experts from replicated weights") {
  testing::TempDir const dir;
  REQUIRE(tiny_moe(4).write_sharded(dir.path(), 1000).ok());
  auto const layout = CheckpointLayout::read(dir.path());
  REQUIRE(layout.ok());
  auto const inventory = take_inventory(*layout);
  REQUIRE(inventory.ok());

  // Per expert: 128 + 8 + 128 + 8 + 128 + 32 bytes.
  std::int64_t const per_expert = 432;
  REQUIRE(inventory->blocks.size() == 2);
  CHECK(inventory->blocks[0].prefix == "layers.0.ffn");
  CHECK(inventory->blocks[1].prefix == "layers.1.ffn");
  CHECK(inventory->blocks[0].expert_bytes == std::vector<std::int64_t>(4, per_expert));
  CHECK(inventory->routed_expert_bytes == 2 * 4 * per_expert);
  CHECK(inventory->replicated_bytes == 16 * 32 * 2 + 2 * 8 * 32);
  CHECK(inventory->tensor_count == 1 + 2 * (1 + 4 * 6));
  CHECK(inventory->expert_bytes_by_dtype.at("F8_E8M0") == 2 * 4 * 48);

  auto const rank1 = inventory->rank_bytes(2, 1);
  REQUIRE(rank1.ok());
  CHECK(*rank1 == inventory->replicated_bytes + 2 * 2 * per_expert);
  auto const one = inventory->rank_bytes(1, 0);
  REQUIRE(one.ok());
  CHECK(*one == inventory->total_bytes());
  auto const uneven = inventory->rank_bytes(3, 0);
  CHECK(uneven.status().code() == StatusCode::kInvalidArgument);
  CHECK(uneven.status().message().find("layers.0.ffn") != std::string::npos);
}

TEST_CASE("inventory orders layers numerically and refuses a gap in the experts") {
  testing::TempDir const dir;
  SafetensorsWriter writer;
  for (int layer : {10, 2}) {
    REQUIRE(add_zeros(writer, "model.layers." + std::to_string(layer) + ".mlp.experts.0.w",
                      DType::kU8, {4})
                .ok());
  }
  REQUIRE(add_zeros(writer, "model.layers.2.mlp.experts.2.w", DType::kU8, {4}).ok());
  REQUIRE(writer.write_file(dir.path() / kSingleFileName).ok());
  auto const layout = CheckpointLayout::read(dir.path());
  REQUIRE(layout.ok());
  auto const inventory = take_inventory(*layout);
  CHECK(inventory.status().code() == StatusCode::kInvalidArgument);
  CHECK(inventory.status().message().find("'model.layers.2.mlp' has expert 2 but no expert 1") !=
        std::string::npos);

  testing::TempDir const ordered_dir;
  SafetensorsWriter ordered;
  for (int layer : {10, 2, 1}) {
    REQUIRE(add_zeros(ordered, "model.layers." + std::to_string(layer) + ".mlp.experts.0.w",
                      DType::kU8, {4})
                .ok());
  }
  REQUIRE(ordered.write_file(ordered_dir.path() / kSingleFileName).ok());
  auto const ordered_layout = CheckpointLayout::read(ordered_dir.path());
  REQUIRE(ordered_layout.ok());
  auto const sorted = take_inventory(*ordered_layout);
  REQUIRE(sorted.ok());
  REQUIRE(sorted->blocks.size() == 3);
  CHECK(sorted->blocks[0].prefix == "model.layers.1.mlp");
  CHECK(sorted->blocks[1].prefix == "model.layers.2.mlp");
  CHECK(sorted->blocks[2].prefix == "model.layers.10.mlp");
}

}  // namespace
}  // namespace gcmoe::checkpoint
