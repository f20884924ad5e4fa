#include "kernels/moe/fp8_expert_layout.h"

#include <set>
#include <utility>
#include <vector>

#include "tests/support/catch.h"

namespace gcmoe::kernels {
namespace {

TEST_CASE("lane/byte coordinates follow the m16n8k32 FP8 A-fragment layout") {
  // Hand-read from the PTX ISA fragment figure: a0 row g, a1 row g+8, a2/a3 the same rows at
  // k + 16; g = lane / 4, t = lane % 4, four elements per register.
  CHECK(lane_byte_coord(0, 0).row == 0);
  CHECK(lane_byte_coord(0, 0).k == 0);
  CHECK(lane_byte_coord(5, 4).row == 9);  // lane 5: g 1, t 1; byte 4 is a1
  CHECK(lane_byte_coord(5, 4).k == 4);
  CHECK(lane_byte_coord(5, 8).row == 1);  // a2
  CHECK(lane_byte_coord(5, 8).k == 20);
  CHECK(lane_byte_coord(31, 63).row == 15);  // last byte of the last k-step
  CHECK(lane_byte_coord(31, 63).k == 127);
  // Every (row, k) of the 16×128 chunk exactly once.
  std::set<std::pair<int, int>> seen;
  for (int lane = 0; lane < 32; ++lane) {
    for (int byte = 0; byte < kLaneBytes; ++byte) {
      TileCoord const at = lane_byte_coord(lane, byte);
      seen.insert({at.row, at.k});
    }
  }
  CHECK(seen.size() == 16u * 128u);
  // k-step major packing: a warp's 16-byte loads of one k-step cover 512 contiguous bytes.
  CHECK(packed_offset(0, 0) == 0);
  CHECK(packed_offset(1, 0) == 16);
  CHECK(packed_offset(0, 16) == 512);
  CHECK(packed_offset(31, 63) == 2047);
}

TEST_CASE("gate/up packing interleaves 8 gate and 8 up rows per tile with their scales") {
  std::int64_t const inter = 16;
  std::int64_t const hidden = 256;
  std::vector<std::uint8_t> gate(inter * hidden);
  std::vector<std::uint8_t> up(inter * hidden);
  for (std::int64_t r = 0; r < inter; ++r) {
    for (std::int64_t k = 0; k < hidden; ++k) {
      gate[r * hidden + k] = static_cast<std::uint8_t>((r * 7 + k) % 251);
      up[r * hidden + k] = static_cast<std::uint8_t>((r * 5 + k * 3) % 241);
    }
  }
  std::vector<float> const gate_scale = {1.0f, 2.0f};  // [1, 2] blocks
  std::vector<float> const up_scale = {3.0f, 4.0f};
  Fp8WeightView const gv{{inter, hidden}, gate, gate_scale};
  Fp8WeightView const uv{{inter, hidden}, up, up_scale};
  auto packed = pack_gate_up(gv, uv);
  REQUIRE(packed.ok());
  CHECK(packed->tiles == 2);
  CHECK(packed->chunks == 2);
  for (std::int64_t tile = 0; tile < 2; ++tile) {
    for (std::int64_t chunk = 0; chunk < 2; ++chunk) {
      for (int lane = 0; lane < 32; ++lane) {
        for (int byte = 0; byte < kLaneBytes; ++byte) {
          TileCoord const at = lane_byte_coord(lane, byte);
          std::int64_t const k = chunk * kChunkK + at.k;
          std::uint8_t const want = at.row < 8 ? gate[(tile * 8 + at.row) * hidden + k]
                                               : up[(tile * 8 + at.row - 8) * hidden + k];
          REQUIRE(packed->bytes[(tile * 2 + chunk) * kChunkBytes + packed_offset(lane, byte)] ==
                  want);
        }
      }
      CHECK(packed->scales[(tile * 2 + chunk) * 2] == gate_scale[chunk]);
      CHECK(packed->scales[(tile * 2 + chunk) * 2 + 1] == up_scale[chunk]);
    }
  }
}

TEST_CASE("down packing keeps 16 consecutive rows and rejects bad shapes") {
  std::vector<std::uint8_t> down(32 * 128, 7);
  std::vector<float> const scale = {0.5f};
  auto packed = pack_down({{32, 128}, down, scale});
  REQUIRE(packed.ok());
  CHECK(packed->tiles == 2);
  CHECK(packed->scales[0] == 0.5f);
  CHECK(packed->scales[1] == 0.5f);

  std::vector<std::uint8_t> odd(24 * 128);
  CHECK(pack_down({{24, 128}, odd, scale}).status().code() == StatusCode::kInvalidArgument);
  std::vector<std::uint8_t> ragged(16 * 100);
  CHECK(pack_down({{16, 100}, ragged, scale}).status().code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gcmoe::kernels
