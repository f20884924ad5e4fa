#include "kernels/moe/mxfp4_expert_wgmma_layout.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/common/check.h"
#include "engine/formats/e4m3.h"
#include "engine/formats/e8m0.h"
#include "engine/formats/mxfp4.h"
#include "kernels/moe/fp8_expert_wgmma_layout.h"
#include "kernels/moe/mxfp4_window_table.h"

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

// The code word of 8 values (layout header): `a` and `b` are 16 source bits each (nibble i = value
// i, as the checkpoint packs them: bit 3 sign, bits 2..0 e1 e0 m) of the word's first and second
// register. mxfp4_wgmma_code_slot states the same placement per value (the unit test checks that
// they agree).
std::uint32_t code_word(std::uint32_t a, std::uint32_t b) {
  std::uint32_t word = 0;
  for (int i = 0; i < 4; ++i) {
    std::uint32_t const va = (a >> (4 * i)) & 0xfu;
    std::uint32_t const vb = (b >> (4 * i)) & 0xfu;
    word |= (va & 7u) << (4 * i) | (va >> 3) << (8 * i + 7);
    word |= (vb & 7u) << (16 + 4 * i) | (vb >> 3) << (8 * i + 3);
  }
  return word;
}

// A row's decode base (layout header): R, the largest e8m0 byte over its blocks with a nonzero
// value, and whether every such block lies within the window below it.
struct RowWindow {
  int base = 127;  // a row of zeros decodes with any base
  bool fits = true;
};

RowWindow row_window(RowSource const& src, std::int64_t cols) {
  std::int64_t const blocks = cols / formats::kMxfp4BlockK;
  std::uint8_t const* const packed = src.view->packed.data() + src.row * (cols / 2);
  std::uint8_t const* const scales = src.view->scales.data() + src.row * blocks;
  auto const nonzero = [&](std::int64_t block) {
    std::uint8_t const* const p = packed + block * (formats::kMxfp4BlockK / 2);
    return std::any_of(p, p + formats::kMxfp4BlockK / 2,
                       [](std::uint8_t pair) { return (pair & 0x77u) != 0; });
  };
  RowWindow w;
  int lowest = 255;
  int highest = -1;
  for (std::int64_t block = 0; block < blocks; ++block) {
    if (nonzero(block)) {
      lowest = std::min<int>(lowest, scales[block]);
      highest = std::max<int>(highest, scales[block]);
    }
  }
  if (highest >= 0) {
    w.base = highest;
    w.fits = highest >= kMxMinWindowedRowByte && highest - lowest < kMxWindowSteps;
  }
  return w;
}

template <typename RowOf>
PackedMxfp4Expert pack(std::int64_t tiles, int group_tiles, std::int64_t cols, RowOf&& row_of) {
  PackedMxfp4Expert out;
  out.tiles = tiles;
  out.group_tiles = group_tiles;
  out.chunks = cols / kMxChunkK;
  out.codes.assign(static_cast<std::size_t>(tiles * out.chunks * kMxCodeImageBytes), 0);
  out.scales.assign(static_cast<std::size_t>(mxfp4_wgmma_scale_words(tiles, out.chunks)), 0);
  std::int64_t const blocks_per_row = cols / formats::kMxfp4BlockK;
  std::vector<std::uint32_t> words(kMxCodeImageBytes / 4, 0);
  RowWindow windows[kMxTileRows];
  for (std::int64_t tile = 0; tile < tiles; ++tile) {
    // The tile's kind: windowed only if every row fits (the kernel picks per 64-row tile).
    bool windowed = true;
    for (int r = 0; r < kMxTileRows; ++r) {
      windows[r] = row_window(row_of(tile, r), cols);
      windowed = windowed && windows[r].fits;
    }
    out.windowed_tiles += windowed ? 1 : 0;
    std::uint32_t* const row_image =
        out.scales.data() + mxfp4_wgmma_row_image(tiles, out.chunks, tile);
    for (int r = 0; r < kMxTileRows; ++r) {
      float const factor = windowed ? std::ldexp(1.0f, windows[r].base - 133) : -1.0f;
      std::memcpy(&row_image[r], &factor, sizeof(factor));
    }
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
        if (windowed) {
          // Blocks of zeros (any byte, even above the base) take step 0.
          std::uint8_t steps[4];
          for (int s = 0; s < 4; ++s) {
            int const d = windows[r].base - bytes[s];
            steps[s] = static_cast<std::uint8_t>(d >= 0 && d < kMxWindowSteps ? d : 0);
          }
          scale[mxfp4_wgmma_scale_word(r)] = mxfp4_wgmma_window_word_of(steps);
        } else {
          scale[mxfp4_wgmma_scale_word(r)] = mxfp4_wgmma_scale_word_of(bytes);
        }
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

std::uint32_t mxfp4_wgmma_window_word_of(std::uint8_t const (&steps)[4]) {
  std::uint32_t word = 0;
  for (int s = 0; s < 4; ++s) {
    word |= static_cast<std::uint32_t>(steps[s] * 8) << (8 * s);
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
  int const nibble = 4 * i + (second != 0 ? 16 : 0);
  int const sign = 8 * i + (second != 0 ? 3 : 7);
  return {word, sign, nibble + 2, nibble + 1, nibble, second != 0};
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
                                std::span<std::uint32_t const> scales,
                                std::span<std::uint32_t const> row_image, int row, int k) {
  MxCodeSlot const slot = mxfp4_wgmma_code_slot(row, k);
  std::uint32_t word = 0;
  std::memcpy(&word, codes.data() + 4 * slot.word, sizeof(word));
  // The kernel's decode of the register holding (row, k) (layout header): the byte permute of
  // the magnitudes through the step's table, the sign or-ed in.
  std::uint32_t const magnitude = word & kMxMagnitudeMask;
  std::uint32_t const selectors = slot.second ? magnitude >> 16 : magnitude;
  std::uint32_t const signs = slot.second ? (word << 4) & kMxSignMask : word & kMxSignMask;
  std::uint32_t const scale_word = scales[static_cast<std::size_t>(mxfp4_wgmma_scale_word(row))];
  std::uint32_t const step_byte = (scale_word >> (8 * (k / 32))) & 0xffu;
  float row_factor = 0.0f;
  std::memcpy(&row_factor, &row_image[static_cast<std::size_t>(row)], sizeof(row_factor));
  bool const windowed = row_factor > 0.0f;
  int const d = windowed ? static_cast<int>(step_byte / 8) : kMxFallbackStep;
  int const i = k % 4;
  std::uint32_t const code = (selectors >> (4 * i)) & 7u;
  auto const e4m3 = static_cast<std::uint8_t>(mx_window_e4m3(static_cast<int>(code), d) |
                                              ((signs >> (8 * i)) & 0x80u));
  if (windowed) {
    return formats::decode_e4m3(e4m3) * row_factor;
  }
  // The fallback's k-step factor: the stored byte shifted into an f32 exponent field.
  std::uint32_t const bits = step_byte << 23;
  float scale = 0.0f;
  std::memcpy(&scale, &bits, sizeof(scale));
  return formats::decode_e4m3(e4m3) * scale;
}

}  // namespace gcmoe::kernels
