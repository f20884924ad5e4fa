#include "kernels/moe/mxfp4_expert_wgmma_layout.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "engine/formats/mxfp4.h"
#include "tests/support/catch.h"

namespace gcmoe::kernels {
namespace {

struct Weight {
  formats::MatrixDims dims;
  std::vector<std::uint8_t> packed;
  std::vector<std::uint8_t> scales;
  Mxfp4WeightView view() const { return {dims, packed, scales}; }
  std::vector<float> dequantized() const {
    std::vector<float> out(static_cast<std::size_t>(dims.elements()));
    REQUIRE(formats::dequantize_mxfp4(packed, scales, dims, out).ok());
    return out;
  }
};

// Random codes; scale bytes drawn per 32-block from [lo, hi] (hi - lo > 11 makes wide chunks).
Weight make(std::int64_t rows, std::int64_t cols, int lo, int hi, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> code(0, 255);
  std::uniform_int_distribution<int> byte(lo, hi);
  Weight w{{rows, cols}, {}, {}};
  w.packed.resize(static_cast<std::size_t>(rows * cols / 2));
  for (auto& b : w.packed) {
    b = static_cast<std::uint8_t>(code(rng));
  }
  w.scales.resize(static_cast<std::size_t>(rows * cols / 32));
  for (auto& b : w.scales) {
    b = static_cast<std::uint8_t>(byte(rng));
  }
  return w;
}

std::span<std::uint8_t const> codes_of(PackedMxfp4Expert const& p, std::int64_t tile,
                                       std::int64_t chunk) {
  return {p.codes.data() + (tile * p.chunks + chunk) * kMxCodeImageBytes,
          static_cast<std::size_t>(kMxCodeImageBytes)};
}
std::span<std::uint32_t const> scales_of(PackedMxfp4Expert const& p, std::int64_t tile,
                                         std::int64_t chunk) {
  return {p.scales.data() + (tile * p.chunks + chunk) * kMxScaleImageWords,
          static_cast<std::size_t>(kMxScaleImageWords)};
}

std::uint8_t code_at(Weight const& w, std::int64_t row, std::int64_t k) {
  std::uint8_t const b = w.packed[static_cast<std::size_t>(row * w.dims.cols / 2 + k / 2)];
  return static_cast<std::uint8_t>(k % 2 == 0 ? b & 0xf : b >> 4);
}

// Every value's magnitude and sign bits sit where mxfp4_wgmma_code_slot says (the slots cover all
// 32 bits of every word, so this pins the whole code image). source_row(tile, r) -> (weight, row).
template <typename SourceRow>
int count_slot_mismatches(PackedMxfp4Expert const& p, SourceRow&& source_row) {
  int mismatches = 0;
  for (std::int64_t tile = 0; tile < p.tiles; ++tile) {
    for (std::int64_t chunk = 0; chunk < p.chunks; ++chunk) {
      auto const codes = codes_of(p, tile, chunk);
      for (int r = 0; r < kMxTileRows; ++r) {
        auto const [weight, row] = source_row(tile, r);
        for (int k = 0; k < kMxChunkK; ++k) {
          std::uint8_t const code = code_at(*weight, row, chunk * kMxChunkK + k);
          MxCodeSlot const slot = mxfp4_wgmma_code_slot(r, k);
          std::uint32_t word = 0;
          std::memcpy(&word, codes.data() + 4 * slot.word, 4);
          bool const ok = ((word >> (4 * slot.nibble)) & 7) == (code & 7u) &&
                          ((word >> slot.sign_bit) & 1) == (code >> 3u);
          mismatches += ok ? 0 : 1;
        }
      }
    }
  }
  return mismatches;
}

TEST_CASE("MXFP4 narrow scale words: the row scale is the word shifted into an f32 exponent") {
  // Every largest byte E the narrow path takes (7..254), the four blocks spread 0..min(11, E)
  // below it. The kernel reads u_s at bits 16 + 4s and the row scale as `word << 23`.
  int mismatches = 0;
  for (int e = kMxMinNarrowMax; e <= 254; ++e) {
    for (int spread = 0; spread <= std::min(kMxMaxNarrowSpread, e); ++spread) {
      std::uint8_t const bytes[4] = {static_cast<std::uint8_t>(e - spread),
                                     static_cast<std::uint8_t>(e),
                                     static_cast<std::uint8_t>(e - spread / 2),
                                     static_cast<std::uint8_t>(e - (spread + 1) / 3)};
      std::uint32_t const word = mxfp4_wgmma_narrow_scale_word(bytes);
      std::uint32_t const bits = word << 23;
      float row_scale = 0.0f;
      std::memcpy(&row_scale, &bits, sizeof(row_scale));
      mismatches += row_scale == std::ldexp(1.0f, e - 133) ? 0 : 1;
      mismatches += ((word >> 8) & 0xff) == 0 ? 0 : 1;
      for (int step = 0; step < 4; ++step) {
        auto const u = static_cast<int>((word >> (16 + 4 * step)) & 0xf);
        mismatches += u == bytes[step] - e + kMxMaxNarrowSpread ? 0 : 1;
      }
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("MXFP4 code slots follow WGMMA's register-A fragment and cover every nibble once") {
  // Row 0, k 0: thread 0, word 0 (k-step 0, row g), nibble 0, sign in bit 7.
  CHECK(mxfp4_wgmma_code_slot(0, 0).word == 0);
  CHECK(mxfp4_wgmma_code_slot(0, 0).nibble == 0);
  CHECK(mxfp4_wgmma_code_slot(0, 0).sign_bit == 7);
  // Row 8 (g 0, the a1/a3 word), k 16 + 5 (a3, t 1, byte 1): thread 1, word 1, nibble 5, bit 11.
  CHECK(mxfp4_wgmma_code_slot(8, 21).word == 1 * 4 + 1);
  CHECK(mxfp4_wgmma_code_slot(8, 21).nibble == 5);
  CHECK(mxfp4_wgmma_code_slot(8, 21).sign_bit == 11);
  // Row 16 * 3 + 2 (warp 3, g 2), k 96 + 14 (k-step 3, t 3, byte 2): half 1, thread 107, word 2.
  MxCodeSlot const s = mxfp4_wgmma_code_slot(50, 110);
  CHECK(s.word == (128 + 107) * 4 + 2);
  CHECK(s.nibble == 2);
  CHECK(s.sign_bit == 23);
  std::set<int> nibbles, signs;
  for (int r = 0; r < kMxTileRows; ++r) {
    for (int k = 0; k < kMxChunkK; ++k) {
      MxCodeSlot const slot = mxfp4_wgmma_code_slot(r, k);
      nibbles.insert(slot.word * 8 + slot.nibble);
      signs.insert(slot.word * 32 + slot.sign_bit);
      CHECK(slot.sign_bit % 4 == 3);
    }
  }
  CHECK(nibbles.size() == static_cast<std::size_t>(kMxTileRows * kMxChunkK));
  CHECK(signs.size() == static_cast<std::size_t>(kMxTileRows * kMxChunkK));
  CHECK(mxfp4_wgmma_scale_word(0) == 0);
  CHECK(mxfp4_wgmma_scale_word(8) == 1);
  CHECK(mxfp4_wgmma_scale_word(17) == 2 * 9);
}

TEST_CASE("MXFP4 gate/up packing places codes, signs and scales where the kernel reads them") {
  std::int64_t const inter = 128;
  std::int64_t const hidden = 256;
  Weight gate = make(inter, hidden, 110, 118, 1);
  Weight up = make(inter, hidden, 110, 118, 2);
  // Output 8*1 + 3 of tile 2 (output 67), k 131: gate code -1.5 (0xb), up code 6 (0x7).
  std::int64_t const out = 2 * 32 + 8 * 1 + 3;
  auto set_code = [](Weight& w, std::int64_t r, std::int64_t k, std::uint8_t c) {
    auto& b = w.packed[static_cast<std::size_t>(r * w.dims.cols / 2 + k / 2)];
    b = static_cast<std::uint8_t>(k % 2 == 0 ? (b & 0xf0) | c : (b & 0x0f) | (c << 4));
  };
  set_code(gate, out, 131, 0xb);
  set_code(up, out, 131, 0x7);
  gate.scales[static_cast<std::size_t>(out * 8 + 4)] = 112;  // chunk 1's first block
  auto packed = pack_gate_up_mxfp4_wgmma(gate.view(), up.view());
  REQUIRE(packed.ok());
  REQUIRE(packed->tiles == inter / 32);
  REQUIRE(packed->chunks == hidden / 128);
  CHECK(packed->wide_tile_chunks == 0);
  // Gate row of output 67 is tile 2, row 16 * 1 + 3; its up row 16 * 1 + 8 + 3.
  for (int const row : {19, 27}) {
    MxCodeSlot const slot = mxfp4_wgmma_code_slot(row, 3);
    std::uint32_t word = 0;
    std::memcpy(&word, codes_of(*packed, 2, 1).data() + 4 * slot.word, 4);
    std::uint32_t const expected = row == 19 ? 0xb : 0x7;
    CHECK(((word >> (4 * slot.nibble)) & 7) == (expected & 7));
    CHECK(((word >> slot.sign_bit) & 1) == (expected >> 3));
  }
  std::uint32_t const scale_word = scales_of(*packed, 2, 1)[mxfp4_wgmma_scale_word(19)];
  std::uint8_t const* b = gate.scales.data() + out * 8 + 4;
  std::uint8_t const e = *std::max_element(b, b + 4);
  CHECK((scale_word & 0xffff) == static_cast<std::uint32_t>(e - 6));
  CHECK(((scale_word >> 16) & 0xf) == static_cast<std::uint32_t>(112 - e + kMxMaxNarrowSpread));
  CHECK(scales_of(*packed, 2, 1)[kMxFlagWord] == 0u);
  CHECK(count_slot_mismatches(*packed, [&](std::int64_t tile, int r) {
          return std::pair{r % 16 < 8 ? &gate : &up, tile * 32 + (r / 16) * 8 + r % 8};
        }) == 0);
  // The kernel's decode gives back exactly the dequantized gate and up values everywhere.
  auto const g = gate.dequantized();
  auto const u = up.dequantized();
  int mismatches = 0;
  for (std::int64_t tile = 0; tile < packed->tiles; ++tile) {
    for (std::int64_t chunk = 0; chunk < packed->chunks; ++chunk) {
      for (int r = 0; r < kMxTileRows; ++r) {
        std::int64_t const o = tile * 32 + (r / 16) * 8 + r % 8;
        auto const& src = r % 16 < 8 ? g : u;
        for (int k = 0; k < kMxChunkK; ++k) {
          float const want = src[static_cast<std::size_t>(o * hidden + chunk * 128 + k)];
          float const got = mxfp4_wgmma_kernel_weight(codes_of(*packed, tile, chunk),
                                                      scales_of(*packed, tile, chunk), r, k);
          mismatches += got == want ? 0 : 1;
        }
      }
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("MXFP4 down packing: extreme and mixed scale bytes stay exact (narrow and wide)") {
  std::int64_t const hidden = 256;
  std::int64_t const inter = 384;
  // Bytes 0..254 anywhere, so most tile-chunks are wide; then narrow, far-off-e4m3 ranges (7..18:
  // the smallest narrow row scale, 2^-126); then 0..6, narrow spread but an f32 subnormal row
  // scale, so wide.
  for (auto const& [lo, hi] : {std::pair{0, 254}, std::pair{60, 71}, std::pair{160, 171},
                               std::pair{7, 18}, std::pair{0, 6}}) {
    Weight const down = make(hidden, inter, lo, hi, 7 + static_cast<std::uint64_t>(lo));
    auto packed = pack_down_mxfp4_wgmma(down.view());
    REQUIRE(packed.ok());
    CHECK(packed->tiles == hidden / 64);
    CHECK(packed->chunks == inter / 128);
    std::int64_t const images = packed->tiles * packed->chunks;
    bool const wide = hi - lo > kMxMaxNarrowSpread || hi < kMxMinNarrowMax;
    CHECK(packed->wide_tile_chunks == (wide ? images : 0));
    CHECK(count_slot_mismatches(*packed, [&](std::int64_t tile, int r) {
            return std::pair{&down, tile * 64 + r};
          }) == 0);
    auto const d = down.dequantized();
    int mismatches = 0;
    for (std::int64_t tile = 0; tile < packed->tiles; ++tile) {
      for (std::int64_t chunk = 0; chunk < packed->chunks; ++chunk) {
        for (int r = 0; r < kMxTileRows; ++r) {
          for (int k = 0; k < kMxChunkK; ++k) {
            float const want =
                d[static_cast<std::size_t>((tile * 64 + r) * inter + chunk * 128 + k)];
            float const got = mxfp4_wgmma_kernel_weight(codes_of(*packed, tile, chunk),
                                                        scales_of(*packed, tile, chunk), r, k);
            mismatches += got == want ? 0 : 1;
          }
        }
      }
    }
    INFO("scale bytes " << lo << ".." << hi);
    CHECK(mismatches == 0);
  }
}

TEST_CASE("MXFP4 WGMMA packing rejects bad shapes and NaN scales with INVALID_ARGUMENT") {
  Weight const ok = make(128, 256, 120, 126, 3);
  Weight const rows_96 = make(96, 256, 120, 126, 4);
  Weight const k_64 = make(128, 64, 120, 126, 5);
  Weight const other = make(256, 256, 120, 126, 6);
  CHECK(pack_down_mxfp4_wgmma(rows_96.view()).status().code() == StatusCode::kInvalidArgument);
  CHECK(pack_down_mxfp4_wgmma(k_64.view()).status().code() == StatusCode::kInvalidArgument);
  CHECK(pack_gate_up_mxfp4_wgmma(ok.view(), other.view()).status().code() ==
        StatusCode::kInvalidArgument);
  Mxfp4WeightView truncated = ok.view();
  truncated.packed = truncated.packed.subspan(1);
  CHECK(pack_down_mxfp4_wgmma(truncated).status().code() == StatusCode::kInvalidArgument);
  Weight nan = ok;
  nan.scales[17] = 0xff;
  auto const status = pack_down_mxfp4_wgmma(nan.view()).status();
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK(status.to_string().find("NaN") != std::string::npos);
  CHECK(pack_down_mxfp4_wgmma(ok.view()).ok());
}

}  // namespace
}  // namespace gcmoe::kernels
