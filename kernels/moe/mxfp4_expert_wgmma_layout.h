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
// Per (tile, chunk), two images (a CTA's group of tiles moves each kind in one bulk copy):
//  * codes, 4096 bytes: 16-byte units [half h][thread 0..127], unit = k-steps 2h and 2h+1, each two
//    words: (row g: a0, a2), (row g+8: a1, a3). A word holds 8 e2m1 values (sign s, exponent e1 e0,
//    mantissa m) placed so that two masks and two shifts give the e4m3 bytes (version 4):
//      first register  = word & 0x9c9c9c9c                                  (byte p: s e1 e0 m at
//      second register = (word << 2 & 0x8c8c8c8c) | (word >> 2 & 0x10101010)  bits 7, 4, 3, 2)
//    so value p of the first register has s, e1, e0, m at bits 8p + 7, 4, 3, 2 and value p of the
//    second at bits 8p + 5, 6, 1, 0. With s at bit 7 and e1 e0 m at bits 4..2, the e4m3 byte is
//    exactly the e2m1 value times 2^-6, subnormal 0.5 and zero included (both formats have their
//    subnormals at exponent field 0): no lookup table, ~5 instructions per 8 values.
//  * scales, 64 words: [w][g][row g, row g+8] one word per row, bytes s = 0..3 the k-steps' e8m0
//    bytes plus kMxScaleBias: `(word >> 8s & 0xff) << 23` is the f32 2^(b - 121) = 2^6 * 2^(b -
//    127) that undoes the decode's 2^-6. The kernel runs one WGMMA per k-step into a fresh
//    accumulator and folds it with that factor (two accumulators in turn, so the next k-step's MMA
//    overlaps the fold), so every byte b in 0..kMxMaxScaleByte is exact; larger bytes (weights >=
//    2^122, beyond what bf16 activations can carry) and 255 (NaN) are rejected at load time.

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
// Masks of the decode (first register; second register's two parts).
inline constexpr std::uint32_t kMxFirstMask = 0x9c9c9c9cu;
inline constexpr std::uint32_t kMxSecondShiftedMask = 0x8c8c8c8cu;   // of word << 2
inline constexpr std::uint32_t kMxSecondExponentMask = 0x10101010u;  // of word >> 2

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
  std::int64_t tiles = 0;             // weight rows / 64, a multiple of group_tiles
  int group_tiles = 1;                // kMxGateUpGroupTiles or kMxDownGroupTiles
  std::int64_t chunks = 0;            // K / 128
  std::vector<std::uint8_t> codes;    // images of 4096 bytes, mxfp4_wgmma_image's order
  std::vector<std::uint32_t> scales;  // images of kMxScaleImageWords words, the same order
};

// Index of the image of (tile, chunk): [tile / group][chunk][tile % group].
constexpr std::int64_t mxfp4_wgmma_image(PackedMxfp4Expert const& p, std::int64_t tile,
                                         std::int64_t chunk) {
  return ((tile / p.group_tiles) * p.chunks + chunk) * p.group_tiles + tile % p.group_tiles;
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

// The scale word of a row's four e8m0 bytes (each <= kMxMaxScaleByte) in one chunk.
std::uint32_t mxfp4_wgmma_scale_word_of(std::uint8_t const (&bytes)[4]);

// L1: gate and up [I, H] each -> I/32 tiles. I % 128 == 0 (a CTA owns 128 outputs, one
// requantization group), H % 128 == 0, every scale byte <= kMxMaxScaleByte.
StatusOr<PackedMxfp4Expert> pack_gate_up_mxfp4_wgmma(Mxfp4WeightView const& gate,
                                                     Mxfp4WeightView const& up);

// L2: down [H, I] -> H/64 tiles. H % 128 == 0 and I % 128 == 0.
StatusOr<PackedMxfp4Expert> pack_down_mxfp4_wgmma(Mxfp4WeightView const& down);

// CPU twin of the kernel's register decode: the weight value (decoded e4m3 byte times the f32
// k-step scale) the kernel multiplies for (row, k) of one (tile, chunk).
float mxfp4_wgmma_kernel_weight(std::span<std::uint8_t const> codes,
                                std::span<std::uint32_t const> scales, int row, int k);

}  // namespace gcmoe::kernels
