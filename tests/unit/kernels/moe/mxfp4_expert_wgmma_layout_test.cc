#include "kernels/moe/mxfp4_expert_wgmma_layout.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "engine/formats/e4m3.h"
#include "engine/formats/mxfp4.h"
#include "kernels/moe/mxfp4_window_table.h"
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

// Random codes; scale bytes drawn per 32-block from [lo, hi].
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
  return {p.codes.data() + mxfp4_wgmma_image(p, tile, chunk) * kMxCodeImageBytes,
          static_cast<std::size_t>(kMxCodeImageBytes)};
}
std::span<std::uint32_t const> scales_of(PackedMxfp4Expert const& p, std::int64_t tile,
                                         std::int64_t chunk) {
  return {p.scales.data() + mxfp4_wgmma_image(p, tile, chunk) * kMxScaleImageWords,
          static_cast<std::size_t>(kMxScaleImageWords)};
}
std::span<std::uint32_t const> rows_of(PackedMxfp4Expert const& p, std::int64_t tile) {
  return {p.scales.data() + mxfp4_wgmma_row_image(p.tiles, p.chunks, tile),
          static_cast<std::size_t>(kMxTileRows)};
}
float row_factor(PackedMxfp4Expert const& p, std::int64_t tile, int r) {
  float f = 0.0f;
  std::memcpy(&f, &rows_of(p, tile)[static_cast<std::size_t>(r)], sizeof(f));
  return f;
}

// The kernel's decode of every (tile, chunk, row, k) against the dequantized weight;
// dequantized_at(tile, r, k_global) gives the expected value.
template <typename Expected>
int count_decode_mismatches(PackedMxfp4Expert const& p, Expected&& dequantized_at) {
  int mismatches = 0;
  for (std::int64_t tile = 0; tile < p.tiles; ++tile) {
    for (std::int64_t chunk = 0; chunk < p.chunks; ++chunk) {
      for (int r = 0; r < kMxTileRows; ++r) {
        for (int k = 0; k < kMxChunkK; ++k) {
          float const want = dequantized_at(tile, r, chunk * kMxChunkK + k);
          float const got = mxfp4_wgmma_kernel_weight(
              codes_of(p, tile, chunk), scales_of(p, tile, chunk), rows_of(p, tile), r, k);
          mismatches += got == want ? 0 : 1;
        }
      }
    }
  }
  return mismatches;
}

std::uint8_t code_at(Weight const& w, std::int64_t row, std::int64_t k) {
  std::uint8_t const b = w.packed[static_cast<std::size_t>(row * w.dims.cols / 2 + k / 2)];
  return static_cast<std::uint8_t>(k % 2 == 0 ? b & 0xf : b >> 4);
}

// Every value's sign, exponent and mantissa bits sit where mxfp4_wgmma_code_slot says (the slots
// cover all 32 bits of every word, so this pins the whole code image). source_row(tile, r) ->
// (weight, row).
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
          bool const ok = ((word >> slot.sign_bit) & 1) == ((code >> 3) & 1u) &&
                          ((word >> slot.e1_bit) & 1) == ((code >> 2) & 1u) &&
                          ((word >> slot.e0_bit) & 1) == ((code >> 1) & 1u) &&
                          ((word >> slot.m_bit) & 1) == (code & 1u);
          mismatches += ok ? 0 : 1;
        }
      }
    }
  }
  return mismatches;
}

TEST_CASE("MXFP4 scale words: every accepted byte gives its k-step factor 2^(b - 121) exactly") {
  // The kernel reads step s's factor as `(word >> 8s & 0xff) << 23` (as f32 bits); with the
  // decode's 2^-6 it makes the dequantized 2^(b - 127) for every byte 0..kMxMaxScaleByte.
  int mismatches = 0;
  for (int b = 0; b <= kMxMaxScaleByte; ++b) {
    std::uint8_t const bytes[4] = {static_cast<std::uint8_t>(b),
                                   static_cast<std::uint8_t>(kMxMaxScaleByte - b),
                                   static_cast<std::uint8_t>(b / 2), static_cast<std::uint8_t>(b)};
    std::uint32_t const word = mxfp4_wgmma_scale_word_of(bytes);
    for (int step = 0; step < 4; ++step) {
      std::uint32_t const bits = ((word >> (8 * step)) & 0xffu) << 23;
      float factor = 0.0f;
      std::memcpy(&factor, &bits, sizeof(factor));
      mismatches += factor * std::ldexp(1.0f, -6) == std::ldexp(1.0f, bytes[step] - 127) ? 0 : 1;
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("MXFP4 window tables: every magnitude at every step is exact e4m3") {
  constexpr float kMagnitudes[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  int mismatches = 0;
  for (int d = 0; d < kMxWindowSteps; ++d) {
    for (int c = 0; c < 8; ++c) {
      std::uint32_t const byte = mx_window_e4m3(c, d);
      CHECK(byte < 0x80u);  // positive: the sign is or-ed in by the decode
      mismatches +=
          formats::decode_e4m3(static_cast<std::uint8_t>(byte)) == std::ldexp(kMagnitudes[c], 6 - d)
              ? 0
              : 1;
      std::uint32_t const word = mx_window_table_word(d, c / 4);
      CHECK(((word >> (8 * (c % 4))) & 0xffu) == byte);
    }
  }
  CHECK(mismatches == 0);
  // The fallback's table is version 4's decode: the value times 2^-6.
  CHECK(formats::decode_e4m3(static_cast<std::uint8_t>(mx_window_e4m3(7, kMxFallbackStep))) ==
        6.0f / 64.0f);
  CHECK(formats::decode_e4m3(static_cast<std::uint8_t>(mx_window_e4m3(1, kMxFallbackStep))) ==
        0.5f / 64.0f);
}

// A CTA's tiles of one chunk are consecutive images (one bulk copy per stage and kind): L1 groups
// of 4 tiles, L2 of 2, chunks of one group after each other, groups after each other.
TEST_CASE("MXFP4 images: a tile group's images of one chunk are contiguous") {
  PackedMxfp4Expert l1;
  l1.tiles = 8;
  l1.chunks = 3;
  l1.group_tiles = kMxGateUpGroupTiles;
  CHECK(mxfp4_wgmma_image(l1, 0, 0) == 0);
  CHECK(mxfp4_wgmma_image(l1, 3, 0) == 3);
  CHECK(mxfp4_wgmma_image(l1, 0, 1) == 4);
  CHECK(mxfp4_wgmma_image(l1, 3, 2) == 11);
  CHECK(mxfp4_wgmma_image(l1, 4, 0) == 12);
  CHECK(mxfp4_wgmma_image(l1, 6, 1) == 18);
  CHECK(mxfp4_wgmma_image(l1, 7, 2) == 23);
  PackedMxfp4Expert l2 = l1;
  l2.group_tiles = kMxDownGroupTiles;
  CHECK(mxfp4_wgmma_image(l2, 1, 0) == 1);
  CHECK(mxfp4_wgmma_image(l2, 0, 1) == 2);
  CHECK(mxfp4_wgmma_image(l2, 2, 0) == 6);
  CHECK(mxfp4_wgmma_image(l2, 7, 2) == 23);
  // Every image exactly once.
  std::vector<int> seen(24, 0);
  for (std::int64_t tile = 0; tile < l1.tiles; ++tile) {
    for (std::int64_t chunk = 0; chunk < l1.chunks; ++chunk) {
      ++seen[static_cast<std::size_t>(mxfp4_wgmma_image(l1, tile, chunk))];
      ++seen[static_cast<std::size_t>(mxfp4_wgmma_image(l2, tile, chunk))];
    }
  }
  CHECK(std::count(seen.begin(), seen.end(), 2) == 24);
}

TEST_CASE("MXFP4 code slots follow WGMMA's register-A fragment and cover every bit once") {
  // Row 0, k 0: thread 0, word 0 (k-step 0, row g), first register's byte 0: magnitude in nibble
  // 0 (e1 e0 m at bits 2, 1, 0), sign at bit 7.
  MxCodeSlot const first = mxfp4_wgmma_code_slot(0, 0);
  CHECK(first.word == 0);
  CHECK_FALSE(first.second);
  CHECK((first.sign_bit == 7 && first.e1_bit == 2 && first.e0_bit == 1 && first.m_bit == 0));
  // Row 8 (g 0, the a1/a3 word), k 16 + 5 (a3, t 1, byte 1): thread 1, word 1, second register's
  // byte 1: magnitude in nibble 4 + 1 (bits 22, 21, 20), sign at bit 8 + 3.
  MxCodeSlot const second = mxfp4_wgmma_code_slot(8, 21);
  CHECK(second.word == 1 * 4 + 1);
  CHECK(second.second);
  CHECK(
      (second.sign_bit == 11 && second.e1_bit == 22 && second.e0_bit == 21 && second.m_bit == 20));
  // Row 16 * 3 + 2 (warp 3, g 2), k 96 + 14 (k-step 3, t 3, byte 2): half 1, thread 107, word 2.
  MxCodeSlot const s = mxfp4_wgmma_code_slot(50, 110);
  CHECK(s.word == (128 + 107) * 4 + 2);
  CHECK(s.sign_bit == 23);
  // Every bit of every word holds exactly one value's bit.
  std::set<int> bits;
  for (int r = 0; r < kMxTileRows; ++r) {
    for (int k = 0; k < kMxChunkK; ++k) {
      MxCodeSlot const slot = mxfp4_wgmma_code_slot(r, k);
      for (int const bit : {slot.sign_bit, slot.e1_bit, slot.e0_bit, slot.m_bit}) {
        bits.insert(slot.word * 32 + bit);
      }
    }
  }
  CHECK(bits.size() == static_cast<std::size_t>(kMxTileRows * kMxChunkK * 4));
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
  // Gate row of output 67 is tile 2, row 16 * 1 + 3; its up row 16 * 1 + 8 + 3.
  for (int const row : {19, 27}) {
    MxCodeSlot const slot = mxfp4_wgmma_code_slot(row, 3);
    std::uint32_t word = 0;
    std::memcpy(&word, codes_of(*packed, 2, 1).data() + 4 * slot.word, 4);
    std::uint32_t const expected = row == 19 ? 0xb : 0x7;
    CHECK(((word >> slot.sign_bit) & 1) == (expected >> 3));
    CHECK(((word >> slot.e1_bit) & 1) == ((expected >> 2) & 1));
    CHECK(((word >> slot.e0_bit) & 1) == ((expected >> 1) & 1));
    CHECK(((word >> slot.m_bit) & 1) == (expected & 1));
  }
  // Bytes 110..118 span 9 exponents: every tile windowed. The gate row's scale word holds 8 d per
  // k-step, d below the row's largest byte R, and the row image 2^(R - 133).
  CHECK(packed->windowed_tiles == packed->tiles);
  std::uint8_t const* const row_bytes = gate.scales.data() + out * 8;
  int const base = *std::max_element(row_bytes, row_bytes + 8);
  std::uint32_t const scale_word = scales_of(*packed, 2, 1)[mxfp4_wgmma_scale_word(19)];
  CHECK((scale_word & 0xff) == static_cast<std::uint32_t>(8 * (base - 112)));
  for (int step = 1; step < 4; ++step) {
    CHECK(((scale_word >> (8 * step)) & 0xff) ==
          static_cast<std::uint32_t>(8 * (base - row_bytes[4 + step])));
  }
  CHECK(row_factor(*packed, 2, 19) == std::ldexp(1.0f, base - 133));
  CHECK(count_slot_mismatches(*packed, [&](std::int64_t tile, int r) {
          return std::pair{r % 16 < 8 ? &gate : &up, tile * 32 + (r / 16) * 8 + r % 8};
        }) == 0);
  // The kernel's decode gives back exactly the dequantized gate and up values everywhere.
  auto const g = gate.dequantized();
  auto const u = up.dequantized();
  CHECK(count_decode_mismatches(*packed, [&](std::int64_t tile, int r, std::int64_t k) {
          std::int64_t const o = tile * 32 + (r / 16) * 8 + r % 8;
          return (r % 16 < 8 ? g : u)[static_cast<std::size_t>(o * hidden + k)];
        }) == 0);
}

TEST_CASE("MXFP4 down packing: extreme and mixed scale bytes stay exact") {
  std::int64_t const hidden = 256;
  std::int64_t const inter = 384;
  // Every accepted byte mixed anywhere (0..248: 2^-127..2^121), far-off-e4m3 ranges, and the
  // smallest bytes (dequantized weights down to 2^-128, f32 subnormals).
  for (auto const& [lo, hi] :
       {std::pair{0, kMxMaxScaleByte}, std::pair{60, 71}, std::pair{160, 171},
        std::pair{236, kMxMaxScaleByte}, std::pair{0, 6}}) {
    Weight const down = make(hidden, inter, lo, hi, 7 + static_cast<std::uint64_t>(lo));
    auto packed = pack_down_mxfp4_wgmma(down.view());
    REQUIRE(packed.ok());
    CHECK(packed->tiles == hidden / 64);
    CHECK(packed->chunks == inter / 128);
    CHECK(count_slot_mismatches(*packed, [&](std::int64_t tile, int r) {
            return std::pair{&down, tile * 64 + r};
          }) == 0);
    auto const d = down.dequantized();
    INFO("scale bytes " << lo << ".." << hi);
    CHECK(count_decode_mismatches(*packed, [&](std::int64_t tile, int r, std::int64_t k) {
            return d[static_cast<std::size_t>((tile * 64 + r) * inter + k)];
          }) == 0);
    // Spreads of at most 14 exponents decode windowed, wider ones and bases below 7 fall back.
    bool const windowed = hi - lo < kMxWindowSteps && hi >= kMxMinWindowedRowByte;
    CHECK(packed->windowed_tiles == (windowed ? packed->tiles : 0));
    for (std::int64_t tile = 0; tile < packed->tiles; ++tile) {
      CHECK((row_factor(*packed, tile, 5) > 0.0f) == windowed);
    }
  }
}

// A row's base is its largest byte over blocks with a nonzero value: a block of zeros with a far
// larger byte, and a row of zeros, leave the tile windowed; one nonzero block 15 below the base
// makes the tile fall back.
TEST_CASE("MXFP4 packing: blocks of zeros do not widen the window; 15 steps fall back") {
  std::int64_t const hidden = 128;  // two tiles
  std::int64_t const inter = 256;
  Weight down = make(hidden, inter, 118, 122, 21);
  auto zero_block = [&](std::int64_t row, std::int64_t block) {
    std::fill_n(down.packed.begin() + row * inter / 2 + block * 16, 16, std::uint8_t{0x88});
  };
  zero_block(3, 2);  // -0 codes only
  down.scales[static_cast<std::size_t>(3 * 8 + 2)] = 200;
  for (std::int64_t block = 0; block < 8; ++block) {
    zero_block(7, block);
    down.scales[static_cast<std::size_t>(7 * 8 + block)] = static_cast<std::uint8_t>(block * 30);
  }
  auto packed = pack_down_mxfp4_wgmma(down.view());
  REQUIRE(packed.ok());
  CHECK(packed->windowed_tiles == 2);
  auto const d = down.dequantized();
  auto const expected = [&](std::int64_t tile, int r, std::int64_t k) {
    return d[static_cast<std::size_t>((tile * 64 + r) * inter + k)];
  };
  CHECK(count_decode_mismatches(*packed, expected) == 0);
  // Row 11: one block 15 below the row's largest (a nonzero block): its tile falls back, exact.
  for (std::int64_t block = 0; block < 8; ++block) {
    down.scales[static_cast<std::size_t>(11 * 8 + block)] = 120;
  }
  down.scales[static_cast<std::size_t>(11 * 8 + 5)] = 105;
  down.packed[static_cast<std::size_t>(11 * inter / 2 + 5 * 16)] = 0x11;
  packed = pack_down_mxfp4_wgmma(down.view());
  REQUIRE(packed.ok());
  CHECK(packed->windowed_tiles == 1);
  CHECK(row_factor(*packed, 0, 0) == -1.0f);
  auto const d2 = down.dequantized();
  CHECK(count_decode_mismatches(*packed, [&](std::int64_t tile, int r, std::int64_t k) {
          return d2[static_cast<std::size_t>((tile * 64 + r) * inter + k)];
        }) == 0);
  // 14 below stays windowed.
  down.scales[static_cast<std::size_t>(11 * 8 + 5)] = 106;
  packed = pack_down_mxfp4_wgmma(down.view());
  REQUIRE(packed.ok());
  CHECK(packed->windowed_tiles == 2);
}

TEST_CASE("MXFP4 WGMMA packing rejects bad shapes, NaN and too large scales: INVALID_ARGUMENT") {
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
  // 249 (2^122) and above: the kernel's f32 factor 2^(b - 121) would overflow; named in the error.
  Weight big = ok;
  big.scales[40] = kMxMaxScaleByte + 1;
  auto const too_big = pack_down_mxfp4_wgmma(big.view()).status();
  CHECK(too_big.code() == StatusCode::kInvalidArgument);
  CHECK(too_big.to_string().find("249") != std::string::npos);
  big.scales[40] = kMxMaxScaleByte;
  CHECK(pack_down_mxfp4_wgmma(big.view()).ok());
  CHECK(pack_down_mxfp4_wgmma(ok.view()).ok());
}

}  // namespace
}  // namespace gcmoe::kernels
