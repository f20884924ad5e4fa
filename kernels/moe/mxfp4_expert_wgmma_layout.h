#pragma once
// The weight layout of the MXFP4 expert GEMM (kernels/moe/mxfp4_expert_wgmma.h, DeepSeek-V4/V4.1
// routed experts), made once at load time.
//
// Swap-AB as in the FP8 WGMMA kernel: weight rows on WGMMA's M (one 64-row tile per consumer
// warpgroup), K walked in chunks of 128 (four e8m0 blocks of 32 = four m64nNk32 k-steps). The A
// operand comes from registers: thread (warp w, lane = 4g + t) holds rows 16w+g and 16w+g+8 and,
// per k-step s, the bytes k = 32s + 4t + 0..3 (regs a0 row g, a1 row g+8) and 32s + 16 + 4t + 0..3
// (a2 row g, a3 row g+8) — PTX ISA "Register fragment for matrix A", m64nNk32 8-bit types.
//
// Row order: L1 slices of 16 rows hold 8 gate rows then the same outputs' up rows (tile t, slice
// w, row g -> output 32t + 8w + g), so a thread holds gate and up of one output; L2 tiles are 64
// consecutive down rows. Same as fp8_expert_wgmma_layout.h.
//
// Per (tile, chunk), two images (a CTA's group of tiles moves each kind in one bulk copy), and per
// tile one row image (version 6, "windowed"):
//  * codes, 4096 bytes: 16-byte units [half h][thread 0..127], unit = k-steps 2h and 2h+1, each two
//    words: (row g: a0, a2), (row g+8: a1, a3). A word holds 8 e2m1 values (sign s, magnitude
//    e1 e0 m) placed for a byte-permute decode: the first register's value p has its magnitude in
//    nibble p (bits 4p + 2..0) and its sign at bit 8p + 7, the second register's value p its
//    magnitude in nibble 4 + p and its sign at bit 8p + 3, so with a table T of 8 e4m3 bytes
//      first  = prmt(T, word & 0x77777777)       | (word & 0x80808080)
//      second = prmt(T, (word & 0x77777777) >> 16) | ((word << 4) & 0x80808080)
//    (7 instructions per 8 values; version 4's masks and shifts took 4 but needed one WGMMA and
//    one f32 fold per k-step).
//  * scales, 64 words: [w][g][row g, row g+8] one word per row, byte s for k-step s. Two kinds of
//    tile (the row image says which):
//    - windowed (every tile of a checkpoint-like expert): byte s = 8 d, d = R - b in 0..14, R the
//      row's largest e8m0 byte over its blocks with any nonzero value (blocks of zeros: d = 0).
//      The kernel decodes with table d (mxfp4_window_table.h: the e2m1 values times 2^(6 - d),
//      exact), so one row's four k-steps share one exponent base: the chunk's four WGMMAs chain
//      into one accumulator, folded once per chunk with the tokens' scales, and the row's
//      2^(R - 133) multiplies the pass's sum once.
//    - fallback (a row whose nonzero blocks span more than 14 exponents below R, or R < 7):
//      byte s = b + kMxScaleBias; the kernel decodes with the constant table kMxFallbackStep (the
//      value times 2^-6) and folds each k-step's own WGMMA with `(word >> 8s & 0xff) << 23` as f32,
//      2^(b - 121), so every byte b in 0..kMxMaxScaleByte is exact. Larger bytes (weights >= 2^122,
//      beyond what bf16 activations can carry) and 255 (NaN) are rejected at load time.
//  * row image, 64 f32 per tile in row order: windowed 2^(R - 133) (> 0), fallback -1 (the sign
//    is the tile's kind; the fallback's sums are already scaled). The row images follow all the
//    scale images in PackedMxfp4Expert::scales (mxfp4_wgmma_row_image).

#include <cstdint>
#include <span>
#include <vector>

#include "engine/common/status.h"
#include "engine/formats/matrix_dims.h"

namespace gcmoe::kernels {

inline constexpr int kMxTileRows = 64;
inline constexpr int kMxChunkK = 128;
inline constexpr int kMxCodeImageBytes = kMxTileRows * kMxChunkK / 2;  // 4096
inline constexpr int kMxScaleImageWords = 64;
inline constexpr int kMxScaleBias = 6;       // stored byte = e8m0 byte + 6 (the decode's 2^-6)
inline constexpr int kMxMaxScaleByte = 248;  // 248 + 6 = 254, the largest normal f32 exponent
// Masks of the decode: the magnitudes (byte-permute selectors) and the first register's signs.
inline constexpr std::uint32_t kMxMagnitudeMask = 0x77777777u;
inline constexpr std::uint32_t kMxSignMask = 0x80808080u;
// A windowed row's factor 2^(R - 133) stays a normal f32 from R = 7.
inline constexpr int kMxMinWindowedRowByte = 7;

// One expert's MXFP4 projection as the DeepSeek checkpoint stores it: logical dims [out, in],
// packed e2m1 [out, in/2] (low nibble = element 2j), e8m0 scales [out, in/32].
struct Mxfp4WeightView {
  formats::MatrixDims dims;
  std::span<std::uint8_t const> packed;
  std::span<std::uint8_t const> scales;
};

// Images in the kernels' order: [tile group][chunk][tile in the group], a group being the tiles one
// CTA owns (L1 4: 128 outputs, one requantization group; L2 2: 128 down rows), so one bulk copy
// moves a stage's code images and one its scale images (mxfp4_wgmma_image).
inline constexpr int kMxGateUpGroupTiles = 4;
inline constexpr int kMxDownGroupTiles = 2;

struct PackedMxfp4Expert {
  std::int64_t tiles = 0;           // weight rows / 64, a multiple of group_tiles
  int group_tiles = 1;              // kMxGateUpGroupTiles or kMxDownGroupTiles
  std::int64_t chunks = 0;          // K / 128
  std::vector<std::uint8_t> codes;  // images of 4096 bytes, mxfp4_wgmma_image's order
  // Images of kMxScaleImageWords words in the same order, then one row image (kMxTileRows f32
  // bits) per tile: mxfp4_wgmma_row_image.
  std::vector<std::uint32_t> scales;
  std::int64_t windowed_tiles = 0;  // tiles whose row image is > 0 (the rest: fallback)
};

// Index of the image of (tile, chunk): [tile / group][chunk][tile % group].
constexpr std::int64_t mxfp4_wgmma_image(PackedMxfp4Expert const& p, std::int64_t tile,
                                         std::int64_t chunk) {
  return ((tile / p.group_tiles) * p.chunks + chunk) * p.group_tiles + tile % p.group_tiles;
}

// Words of a projection's scales: its images, then its tiles' row images.
constexpr std::int64_t mxfp4_wgmma_scale_words(std::int64_t tiles, std::int64_t chunks) {
  return (tiles * chunks + tiles) * kMxScaleImageWords;
}

// Word index of tile `tile`'s row image inside PackedMxfp4Expert::scales (the kernel finds it the
// same way from its tiles and chunks).
constexpr std::int64_t mxfp4_wgmma_row_image(std::int64_t tiles, std::int64_t chunks,
                                             std::int64_t tile) {
  return (tiles * chunks + tile) * kMxScaleImageWords;
}

// Word index (0..1023) inside a code image of the word holding row `row` (0..63), k (0..127), and
// the bits (0..31) of the value's sign, exponent (high, low) and mantissa inside it.
struct MxCodeSlot {
  int word = 0;
  int sign_bit = 0;
  int e1_bit = 0;
  int e0_bit = 0;
  int m_bit = 0;
  bool second = false;  // the word's second register (k + 16)
};
MxCodeSlot mxfp4_wgmma_code_slot(int row, int k);

// Word index (0..63) of row `row`'s scale word inside a scale image.
constexpr int mxfp4_wgmma_scale_word(int row) {
  return ((row / 16) * 8 + row % 8) * 2 + (row % 16) / 8;
}

// A fallback tile's scale word of a row's four e8m0 bytes (each <= kMxMaxScaleByte) in one chunk.
std::uint32_t mxfp4_wgmma_scale_word_of(std::uint8_t const (&bytes)[4]);
// A windowed tile's scale word of a row's four window steps (each < kMxWindowSteps).
std::uint32_t mxfp4_wgmma_window_word_of(std::uint8_t const (&steps)[4]);

// L1: gate and up [I, H] each -> I/32 tiles. I % 128 == 0 (a CTA owns 128 outputs, one
// requantization group), H % 128 == 0, every scale byte <= kMxMaxScaleByte.
StatusOr<PackedMxfp4Expert> pack_gate_up_mxfp4_wgmma(Mxfp4WeightView const& gate,
                                                     Mxfp4WeightView const& up);

// L2: down [H, I] -> H/64 tiles. H % 128 == 0 and I % 128 == 0.
StatusOr<PackedMxfp4Expert> pack_down_mxfp4_wgmma(Mxfp4WeightView const& down);

// CPU twin of the kernel's register decode: the weight value the kernel multiplies for (row, k) of
// one (tile, chunk) — the decoded e4m3 byte times the row factor (windowed) or the f32 k-step
// factor (fallback). row_image: the tile's kMxTileRows row words.
float mxfp4_wgmma_kernel_weight(std::span<std::uint8_t const> codes,
                                std::span<std::uint32_t const> scales,
                                std::span<std::uint32_t const> row_image, int row, int k);

}  // namespace gcmoe::kernels
