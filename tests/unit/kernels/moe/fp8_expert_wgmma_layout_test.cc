#include "kernels/moe/fp8_expert_wgmma_layout.h"

#include <set>
#include <vector>

#include "tests/support/catch.h"

namespace gcmoe::kernels {
namespace {

TEST_CASE("the 128-byte swizzle permutes 16-byte units inside each row, by row mod 8") {
  // PTX ISA, "Shared memory matrix layout", 128B swizzle: unit u of row r at u ^ (r % 8).
  CHECK(wgmma_swizzled_offset(0, 0) == 0);
  CHECK(wgmma_swizzled_offset(0, 127) == 127);
  CHECK(wgmma_swizzled_offset(1, 0) == 128 + 16);
  CHECK(wgmma_swizzled_offset(3, 37) == 3 * 128 + ((2 ^ 3) << 4) + 5);
  CHECK(wgmma_swizzled_offset(9, 16) == 9 * 128 + ((1 ^ 1) << 4));
  std::set<int> seen;
  for (int r = 0; r < kWgmmaTileRows; ++r) {
    for (int k = 0; k < kChunkK; ++k) {
      int const at = wgmma_swizzled_offset(r, k);
      CHECK(at / kChunkK == r);  // a row stays in its 128 bytes
      seen.insert(at);
    }
  }
  CHECK(seen.size() == static_cast<std::size_t>(kWgmmaChunkBytes));
}

TEST_CASE("WGMMA images: a group's images of one chunk side by side, every image once") {
  // The kernels copy one chunk of one tile group (kWgs tiles) in one bulk copy: those images must
  // be consecutive, group after group, chunk after chunk.
  std::int64_t const tiles = 8;
  std::int64_t const chunks = 3;
  for (int const group_tiles : {kWgmmaGateUpGroupTiles, kWgmmaDownGroupTiles}) {
    std::set<std::int64_t> seen;
    for (std::int64_t tile = 0; tile < tiles; ++tile) {
      for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
        std::int64_t const at = wgmma_image_index(tile, chunk, chunks, group_tiles);
        std::int64_t const group = tile / group_tiles;
        CHECK(at == (group * chunks + chunk) * group_tiles + tile % group_tiles);
        seen.insert(at);
      }
    }
    CHECK(seen.size() == static_cast<std::size_t>(tiles * chunks));
    CHECK(*seen.rbegin() == tiles * chunks - 1);
  }
  CHECK(wgmma_image_index(5, 2, 3, 4) == (1 * 3 + 2) * 4 + 1);
}

struct Matrix {
  std::vector<std::uint8_t> codes;
  std::vector<float> scales;
};

// codes (r, k) = a value unique per (matrix, r, k) mod 251; scale_inv of block (br, bc).
Matrix make(std::int64_t rows, std::int64_t cols, int salt) {
  Matrix m;
  m.codes.resize(static_cast<std::size_t>(rows * cols));
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t k = 0; k < cols; ++k) {
      m.codes[r * cols + k] = static_cast<std::uint8_t>((r * 13 + k * 7 + salt) % 251);
    }
  }
  for (std::int64_t b = 0; b < (rows / 128) * (cols / 128); ++b) {
    m.scales.push_back(static_cast<float>(salt * 100 + b));
  }
  return m;
}

TEST_CASE("WGMMA gate/up tiles: per 16-row slice 8 gate rows then the same outputs' up rows") {
  std::int64_t const inter = 256;
  std::int64_t const hidden = 256;
  Matrix const gate = make(inter, hidden, 1);
  Matrix const up = make(inter, hidden, 2);
  auto packed = pack_gate_up_wgmma({{inter, hidden}, gate.codes, gate.scales},
                                   {{inter, hidden}, up.codes, up.scales});
  REQUIRE(packed.ok());
  REQUIRE(packed->tiles == inter / 32);
  REQUIRE(packed->chunks == hidden / 128);
  int mismatches = 0;
  for (std::int64_t tile = 0; tile < packed->tiles; ++tile) {
    for (std::int64_t chunk = 0; chunk < packed->chunks; ++chunk) {
      std::uint8_t const* image =
          packed->bytes.data() +
          wgmma_image_index(tile, chunk, packed->chunks, kWgmmaGateUpGroupTiles) * kWgmmaChunkBytes;
      for (int r = 0; r < kWgmmaTileRows; ++r) {
        std::int64_t const out = tile * 32 + (r / 16) * 8 + r % 8;
        Matrix const& src = r % 16 < 8 ? gate : up;
        for (int k = 0; k < kChunkK; ++k) {
          mismatches +=
              image[wgmma_swizzled_offset(r, k)] != src.codes[out * hidden + chunk * kChunkK + k];
        }
      }
      float const* s = packed->scales.data() + (tile * packed->chunks + chunk) * 2;
      std::int64_t const block = (tile * 32 / 128) * (hidden / 128) + chunk;
      CHECK(s[0] == gate.scales[block]);
      CHECK(s[1] == up.scales[block]);
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("WGMMA down tiles: 64 consecutive rows, one scale block") {
  std::int64_t const hidden = 384;
  std::int64_t const inter = 256;
  Matrix const down = make(hidden, inter, 3);
  auto packed = pack_down_wgmma({{hidden, inter}, down.codes, down.scales});
  REQUIRE(packed.ok());
  REQUIRE(packed->tiles == hidden / 64);
  int mismatches = 0;
  for (std::int64_t tile = 0; tile < packed->tiles; ++tile) {
    for (std::int64_t chunk = 0; chunk < packed->chunks; ++chunk) {
      std::uint8_t const* image =
          packed->bytes.data() +
          wgmma_image_index(tile, chunk, packed->chunks, kWgmmaDownGroupTiles) * kWgmmaChunkBytes;
      for (int r = 0; r < kWgmmaTileRows; ++r) {
        for (int k = 0; k < kChunkK; ++k) {
          mismatches += image[wgmma_swizzled_offset(r, k)] !=
                        down.codes[(tile * 64 + r) * inter + chunk * kChunkK + k];
        }
      }
      float const* s = packed->scales.data() + (tile * packed->chunks + chunk) * 2;
      std::int64_t const block = (tile * 64 / 128) * (inter / 128) + chunk;
      // Both equal: the L2 kernels read only the first (fp8_expert_wgmma_pass.cuh, kOneRowScale).
      CHECK(s[0] == down.scales[block]);
      CHECK(s[1] == down.scales[block]);
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("WGMMA packing refuses shapes the kernel cannot tile") {
  Matrix const odd = make(96, 256, 4);  // 96 rows: not a multiple of 128
  Matrix const ok = make(128, 256, 5);
  std::vector<float> const scales(2, 1.0f);
  auto r = pack_down_wgmma({{96, 256}, odd.codes, scales});
  CHECK(r.status().code() == StatusCode::kInvalidArgument);
  auto g = pack_gate_up_wgmma({{128, 256}, ok.codes, ok.scales}, {{96, 256}, odd.codes, scales});
  CHECK(!g.ok());
}

}  // namespace
}  // namespace gcmoe::kernels
