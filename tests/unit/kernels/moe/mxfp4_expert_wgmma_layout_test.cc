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
  // Row 0, k 0: thread 0, word 0 (k-step 0, row g), first register's byte 0: bits 7, 4, 3, 2.
  MxCodeSlot const first = mxfp4_wgmma_code_slot(0, 0);
  CHECK(first.word == 0);
  CHECK_FALSE(first.second);
  CHECK((first.sign_bit == 7 && first.e1_bit == 4 && first.e0_bit == 3 && first.m_bit == 2));
  // Row 8 (g 0, the a1/a3 word), k 16 + 5 (a3, t 1, byte 1): thread 1, word 1, second register's
  // byte 1: bits 8 + 5, 6, 1, 0.
  MxCodeSlot const second = mxfp4_wgmma_code_slot(8, 21);
  CHECK(second.word == 1 * 4 + 1);
  CHECK(second.second);
  CHECK((second.sign_bit == 13 && second.e1_bit == 14 && second.e0_bit == 9 && second.m_bit == 8));
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
  std::uint32_t const scale_word = scales_of(*packed, 2, 1)[mxfp4_wgmma_scale_word(19)];
  std::uint8_t const* b = gate.scales.data() + out * 8 + 4;
  CHECK((scale_word & 0xff) == 112u + kMxScaleBias);
  for (int step = 1; step < 4; ++step) {
    CHECK(((scale_word >> (8 * step)) & 0xff) ==
          static_cast<std::uint32_t>(b[step] + kMxScaleBias));
  }
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
