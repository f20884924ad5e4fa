#include "kernels/moe/mxfp4_expert_wgmma_layout.h"

#include <algorithm>
#include <cstring>

#include "engine/common/check.h"
#include "engine/formats/e4m3.h"
#include "engine/formats/e8m0.h"
#include "engine/formats/mxfp4.h"
#include "kernels/moe/fp8_expert_wgmma_layout.h"

namespace gcmoe::kernels {
namespace {

constexpr std::int64_t kRowBlock = 128;  // L1 CTAs own 128 outputs, L2 CTAs 128 rows

Status check_view(Mxfp4WeightView const& view, char const* name) {
  GCMOE_CHECK_ARG(view.dims.rows > 0 && view.dims.cols > 0, "{}: empty [{}, {}]", name,
                  view.dims.rows, view.dims.cols);
  GCMOE_CHECK_ARG(view.dims.rows % kRowBlock == 0, "{}: {} rows is not a multiple of {}", name,
                  view.dims.rows, kRowBlock);
  GCMOE_CHECK_ARG(view.dims.cols % kMxChunkK == 0, "{}: K {} is not a multiple of {}", name,
                  view.dims.cols, kMxChunkK);
  GCMOE_CHECK_ARG(
      static_cast<std::int64_t>(view.packed.size()) == view.dims.rows * view.dims.cols / 2,
      "{}: {} packed bytes, expected {}", name, view.packed.size(),
      view.dims.rows * view.dims.cols / 2);
  GCMOE_CHECK_ARG(static_cast<std::int64_t>(view.scales.size()) ==
                      view.dims.rows * (view.dims.cols / formats::kMxfp4BlockK),
                  "{}: {} scale bytes, expected {}", name, view.scales.size(),
                  view.dims.rows * (view.dims.cols / formats::kMxfp4BlockK));
  auto const nan = std::find(view.scales.begin(), view.scales.end(), formats::kE8m0NanCode);
  GCMOE_CHECK_ARG(nan == view.scales.end(), "{}: NaN e8m0 scale byte (255) at index {}", name,
                  nan - view.scales.begin());
  auto const big = std::find_if(view.scales.begin(), view.scales.end(),
                                [](std::uint8_t b) { return b > kMxMaxScaleByte; });
  GCMOE_CHECK_ARG(
      big == view.scales.end(),
      "{}: e8m0 scale byte {} (2^{}) at index {} is above {}: weights of 2^122 and more "
      "are not supported",
      name, *big, *big - 127, big - view.scales.begin(), kMxMaxScaleByte);
  return Status();
}

struct RowSource {
  Mxfp4WeightView const* view = nullptr;
  std::int64_t row = 0;
};

// Bit positions inside byte p of a code word of the first and second register's value p
// (layout header): sign, e1, e0, m.
constexpr int kFirstBits[4] = {7, 4, 3, 2};
constexpr int kSecondBits[4] = {5, 6, 1, 0};

// The code word of 8 values (layout header): `a` and `b` are 16 source bits each (nibble i = value
// i, as the checkpoint packs them: bit 3 sign, bits 2..0 e1 e0 m) of the word's first and second
// register. mxfp4_wgmma_code_slot states the same placement per value (the unit test checks that
// they agree).
std::uint32_t code_word(std::uint32_t a, std::uint32_t b) {
  std::uint32_t word = 0;
  for (int i = 0; i < 4; ++i) {
    for (int bit = 0; bit < 4; ++bit) {
      word |= ((a >> (4 * i + 3 - bit)) & 1u) << (8 * i + kFirstBits[bit]);
      word |= ((b >> (4 * i + 3 - bit)) & 1u) << (8 * i + kSecondBits[bit]);
    }
  }
  return word;
}

template <typename RowOf>
PackedMxfp4Expert pack(std::int64_t tiles, int group_tiles, std::int64_t cols, RowOf&& row_of) {
  PackedMxfp4Expert out;
  out.tiles = tiles;
  out.group_tiles = group_tiles;
  out.chunks = cols / kMxChunkK;
  out.codes.assign(static_cast<std::size_t>(tiles * out.chunks * kMxCodeImageBytes), 0);
  out.scales.assign(static_cast<std::size_t>(tiles * out.chunks * kMxScaleImageWords), 0);
  std::int64_t const blocks_per_row = cols / formats::kMxfp4BlockK;
  std::vector<std::uint32_t> words(kMxCodeImageBytes / 4, 0);
  for (std::int64_t tile = 0; tile < tiles; ++tile) {
    for (std::int64_t chunk = 0; chunk < out.chunks; ++chunk) {
      std::int64_t const image = mxfp4_wgmma_image(out, tile, chunk);
      std::uint32_t* const scale = out.scales.data() + image * kMxScaleImageWords;
      for (int r = 0; r < kMxTileRows; ++r) {
        RowSource const src = row_of(tile, r);
        std::uint8_t const* const packed =
            src.view->packed.data() + src.row * (cols / 2) + chunk * (kMxChunkK / 2);
        int const thread0 = 32 * (r / 16) + 4 * (r % 8);
        int const upper = (r % 16) / 8;  // row g + 8: the second word of a k-step
        for (int step = 0; step < 4; ++step) {
          for (int t = 0; t < 4; ++t) {
            int const k = 32 * step + 4 * t;  // the first register's values; the second's k + 16
            std::uint32_t const a =
                packed[k / 2] | (static_cast<std::uint32_t>(packed[k / 2 + 1]) << 8);
            std::uint32_t const b =
                packed[k / 2 + 8] | (static_cast<std::uint32_t>(packed[k / 2 + 9]) << 8);
            words[static_cast<std::size_t>(((step / 2) * 128 + thread0 + t) * 4 + (step % 2) * 2 +
                                           upper)] = code_word(a, b);
          }
        }
        std::uint8_t bytes[4];
        for (int s = 0; s < 4; ++s) {
          bytes[s] =
              src.view->scales[static_cast<std::size_t>(src.row * blocks_per_row + chunk * 4 + s)];
        }
        scale[mxfp4_wgmma_scale_word(r)] = mxfp4_wgmma_scale_word_of(bytes);
      }
      std::memcpy(out.codes.data() + image * kMxCodeImageBytes, words.data(), kMxCodeImageBytes);
    }
  }
  return out;
}

}  // namespace

std::uint32_t mxfp4_wgmma_scale_word_of(std::uint8_t const (&bytes)[4]) {
  std::uint32_t word = 0;
  for (int s = 0; s < 4; ++s) {
    word |= static_cast<std::uint32_t>(bytes[s] + kMxScaleBias) << (8 * s);
  }
  return word;
}

MxCodeSlot mxfp4_wgmma_code_slot(int row, int k) {
  int const w = row / 16;
  int const g = row % 8;
  int const upper = (row % 16) / 8;  // row g + 8: the a1/a3 word
  int const step = k / 32;
  int const second = (k % 32) / 16;  // a2/a3: k + 16
  int const t = (k % 16) / 4;
  int const i = k % 4;
  int const thread = 32 * w + 4 * g + t;
  int const half = step / 2;
  int const word = (half * 128 + thread) * 4 + (step % 2) * 2 + upper;
  int const* const bits = second != 0 ? kSecondBits : kFirstBits;
  return {word, 8 * i + bits[0], 8 * i + bits[1], 8 * i + bits[2], 8 * i + bits[3], second != 0};
}

StatusOr<PackedMxfp4Expert> pack_gate_up_mxfp4_wgmma(Mxfp4WeightView const& gate,
                                                     Mxfp4WeightView const& up) {
  GCMOE_RETURN_IF_ERROR(check_view(gate, "gate"));
  GCMOE_RETURN_IF_ERROR(check_view(up, "up"));
  GCMOE_CHECK_ARG(gate.dims == up.dims, "gate [{}, {}] and up [{}, {}] differ", gate.dims.rows,
                  gate.dims.cols, up.dims.rows, up.dims.cols);
  return pack(gate.dims.rows / 32, kMxGateUpGroupTiles, gate.dims.cols,
              [&](std::int64_t tile, int row) {
                GateUpSource const src = gate_up_source(tile, row);
                return RowSource{src.up ? &up : &gate, src.output};
              });
}

StatusOr<PackedMxfp4Expert> pack_down_mxfp4_wgmma(Mxfp4WeightView const& down) {
  GCMOE_RETURN_IF_ERROR(check_view(down, "down"));
  return pack(down.dims.rows / kMxTileRows, kMxDownGroupTiles, down.dims.cols,
              [&](std::int64_t tile, int row) {
                return RowSource{&down, tile * kMxTileRows + row};
              });
}

float mxfp4_wgmma_kernel_weight(std::span<std::uint8_t const> codes,
                                std::span<std::uint32_t const> scales, int row, int k) {
  MxCodeSlot const slot = mxfp4_wgmma_code_slot(row, k);
  std::uint32_t word = 0;
  std::memcpy(&word, codes.data() + 4 * slot.word, sizeof(word));
  // The kernel's decode of the register holding (row, k) (layout header).
  std::uint32_t const reg =
      slot.second ? ((word << 2) & kMxSecondShiftedMask) | ((word >> 2) & kMxSecondExponentMask)
                  : word & kMxFirstMask;
  auto const e4m3 = static_cast<std::uint8_t>(reg >> (8 * (k % 4)));
  // The kernel's k-step scale: the stored byte shifted into an f32 exponent field.
  std::uint32_t const scale_word = scales[static_cast<std::size_t>(mxfp4_wgmma_scale_word(row))];
  std::uint32_t const bits = ((scale_word >> (8 * (k / 32))) & 0xffu) << 23;
  float scale = 0.0f;
  std::memcpy(&scale, &bits, sizeof(scale));
  return formats::decode_e4m3(e4m3) * scale;
}

}  // namespace gcmoe::kernels
