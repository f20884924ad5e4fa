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
  return Status();
}

struct RowSource {
  Mxfp4WeightView const* view = nullptr;
  std::int64_t row = 0;
};

// The code word of 8 values (layout header): `a` and `b` are 16 source bits each (nibble i = value
// i, as the checkpoint packs them) of the word's first and second register. Word by word, so a
// V4.1 expert packs in tens of milliseconds; mxfp4_wgmma_code_slot states the same placement per
// value (the unit test checks that they agree).
std::uint32_t code_word(std::uint32_t a, std::uint32_t b) {
  std::uint32_t word = (a & 0x7777u) | ((b & 0x7777u) << 16);
  for (int i = 0; i < 4; ++i) {
    word |= ((a >> (4 * i + 3)) & 1u) << (8 * i + 7);
    word |= ((b >> (4 * i + 3)) & 1u) << (8 * i + 3);
  }
  return word;
}

template <typename RowOf>
PackedMxfp4Expert pack(std::int64_t tiles, std::int64_t cols, RowOf&& row_of) {
  PackedMxfp4Expert out;
  out.tiles = tiles;
  out.chunks = cols / kMxChunkK;
  out.codes.assign(static_cast<std::size_t>(tiles * out.chunks * kMxCodeImageBytes), 0);
  out.scales.assign(static_cast<std::size_t>(tiles * out.chunks * kMxScaleImageWords), 0);
  std::int64_t const blocks_per_row = cols / formats::kMxfp4BlockK;
  std::vector<std::uint32_t> words(kMxCodeImageBytes / 4, 0);
  for (std::int64_t tile = 0; tile < tiles; ++tile) {
    for (std::int64_t chunk = 0; chunk < out.chunks; ++chunk) {
      std::int64_t const image = tile * out.chunks + chunk;
      std::uint32_t* const scale = out.scales.data() + image * kMxScaleImageWords;
      std::uint8_t bytes[kMxTileRows][4];
      bool wide = false;
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
        for (int s = 0; s < 4; ++s) {
          bytes[r][s] =
              src.view->scales[static_cast<std::size_t>(src.row * blocks_per_row + chunk * 4 + s)];
        }
        auto const [lo, hi] = std::minmax_element(bytes[r], bytes[r] + 4);
        wide = wide || *hi - *lo > kMxMaxNarrowSpread || *hi < kMxMinNarrowMax;
      }
      for (int r = 0; r < kMxTileRows; ++r) {
        std::uint32_t word = 0;
        if (wide) {
          for (int s = 0; s < 4; ++s) {
            word |= static_cast<std::uint32_t>(bytes[r][s]) << (8 * s);
          }
        } else {
          word = mxfp4_wgmma_narrow_scale_word(bytes[r]);
        }
        scale[mxfp4_wgmma_scale_word(r)] = word;
      }
      scale[kMxFlagWord] = wide ? 1u : 0u;
      out.wide_tile_chunks += wide ? 1 : 0;
      std::memcpy(out.codes.data() + image * kMxCodeImageBytes, words.data(), kMxCodeImageBytes);
    }
  }
  return out;
}

// 2^(e - 133) for e in 0..254, built from bits as the kernel does (subnormal below e = 7).
float pow2_scale(std::uint32_t e) {
  std::uint32_t const bits = e >= 7 ? (e - 6) << 23 : 1u << (e + 16);
  float f = 0.0f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

// PTX prmt.b32 (default mode, selector nibble < 8): byte i = byte sel_i of {hi, lo}.
std::uint32_t byte_perm(std::uint32_t lo, std::uint32_t hi, std::uint32_t sel) {
  std::uint64_t const src = (static_cast<std::uint64_t>(hi) << 32) | lo;
  std::uint32_t out = 0;
  for (int i = 0; i < 4; ++i) {
    std::uint32_t const index = (sel >> (4 * i)) & 7;
    out |= static_cast<std::uint32_t>((src >> (8 * index)) & 0xff) << (8 * i);
  }
  return out;
}

}  // namespace

std::uint32_t mxfp4_wgmma_narrow_scale_word(std::uint8_t const (&bytes)[4]) {
  std::uint8_t const e = *std::max_element(bytes, bytes + 4);
  std::uint32_t word = static_cast<std::uint32_t>(e - 6);
  for (int s = 0; s < 4; ++s) {
    word |= static_cast<std::uint32_t>(bytes[s] - e + kMxMaxNarrowSpread) << (16 + 4 * s);
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
  return {word, second * 4 + i, second != 0 ? 8 * i + 3 : 8 * i + 7};
}

StatusOr<PackedMxfp4Expert> pack_gate_up_mxfp4_wgmma(Mxfp4WeightView const& gate,
                                                     Mxfp4WeightView const& up) {
  GCMOE_RETURN_IF_ERROR(check_view(gate, "gate"));
  GCMOE_RETURN_IF_ERROR(check_view(up, "up"));
  GCMOE_CHECK_ARG(gate.dims == up.dims, "gate [{}, {}] and up [{}, {}] differ", gate.dims.rows,
                  gate.dims.cols, up.dims.rows, up.dims.cols);
  return pack(gate.dims.rows / 32, gate.dims.cols, [&](std::int64_t tile, int row) {
    GateUpSource const src = gate_up_source(tile, row);
    return RowSource{src.up ? &up : &gate, src.output};
  });
}

StatusOr<PackedMxfp4Expert> pack_down_mxfp4_wgmma(Mxfp4WeightView const& down) {
  GCMOE_RETURN_IF_ERROR(check_view(down, "down"));
  return pack(down.dims.rows / kMxTileRows, down.dims.cols, [&](std::int64_t tile, int row) {
    return RowSource{&down, tile * kMxTileRows + row};
  });
}

float mxfp4_wgmma_kernel_weight(std::span<std::uint8_t const> codes,
                                std::span<std::uint32_t const> scales, int row, int k) {
  MxCodeSlot const slot = mxfp4_wgmma_code_slot(row, k);
  std::uint32_t word = 0;
  std::memcpy(&word, codes.data() + 4 * slot.word, sizeof(word));
  std::uint32_t const scale_word = scales[static_cast<std::size_t>(mxfp4_wgmma_scale_word(row))];
  bool const wide = scales[kMxFlagWord] != 0;
  int const step = k / 32;
  std::uint32_t const u = wide ? kMxMaxNarrowSpread : (scale_word >> (16 + 4 * step)) & 0xf;
  std::uint32_t const lut_lo = kMxLutLo + u * 0x08080800u;
  std::uint32_t const lut_hi = kMxLutHi + u * 0x08080808u;
  // The kernel's decode of the register holding (row, k): magnitudes by prmt, then the signs.
  std::uint32_t const magnitudes = word & 0x77777777u;
  bool const second = slot.nibble >= 4;
  std::uint32_t const reg =
      second ? byte_perm(lut_lo, lut_hi, magnitudes >> 16) | ((word << 4) & 0x80808080u)
             : byte_perm(lut_lo, lut_hi, magnitudes) | (word & 0x80808080u);
  auto const e4m3 = static_cast<std::uint8_t>(reg >> (8 * (k % 4)));
  if (!wide) {
    // The kernel's narrow row scale: the word shifted into an f32 exponent field.
    std::uint32_t const bits = scale_word << 23;
    float row_scale = 0.0f;
    std::memcpy(&row_scale, &bits, sizeof(row_scale));
    return formats::decode_e4m3(e4m3) * row_scale;
  }
  return formats::decode_e4m3(e4m3) * pow2_scale((scale_word >> (8 * step)) & 0xff);
}

}  // namespace gcmoe::kernels
