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
// Per (tile, chunk), two images, each moved by one bulk copy:
//  * codes, 4096 bytes: 16-byte units [half h][thread 0..127], unit = k-steps 2h and 2h+1, each two
//    words: (row g: a0, a2), (row g+8: a1, a3). A word holds 8 e2m1 values in the kernel's decode
//    order: nibble p (0..3) bits 0..2 = |A_p| (the first register's byte p), nibble p+4 bits 0..2 =
//    |B_p| (the second's); bit 3 of nibble 2p+1 = sign of A_p, of nibble 2p = sign of B_p. So a
//    `prmt` on the magnitudes and an OR of (word & 0x80808080) / (word << 4 & 0x80808080) give the
//    e4m3 bytes: two wide shared loads and ~4 instructions per register.
//  * scales, 68 words: [w][g][row g, row g+8] one word per row, then a flag word (1 = wide), then
//    3 zero words (16-byte multiple).
//
// Scale handling (any e8m0 byte 0..254 is exact; 255 = NaN is rejected at load time). Let b0..b3
// be a row's four bytes in the chunk and E = max(b). Every e2m1 value times 2^(d+6), d = b_s - E,
// is a normal e4m3 number for d in [-11, 0] (0.5 * 2^-5 = 2^-6 is e4m3's smallest normal, 6 * 2^6
// = 384 <= 448), so when all 64 rows of a tile-chunk have max(b) - min(b) <= 11 ("narrow", the
// expected case for trained weights) the kernel folds the per-32 ratios into the decoded e4m3 bytes
// (u_s = d + 11 is added to the LUT's exponents) and applies 2^(E-133) as an f32 row scale to the
// chunk's partial sum: one WGMMA chain per chunk, as FP8. Row word (version 2): (E - 6) | u0 << 16
// | u1 << 20 | u2 << 24 | u3 << 28, bits 8..15 zero, so `word << 23` is the f32 bit pattern of
// 2^(E-133) (one instruction, no subnormal case) and u3 is `word >> 28`; a tile-chunk with a row of
// E < 7 (an f32 subnormal row scale) is therefore wide. Otherwise ("wide", flag 1) the row words
// are the raw bytes b0 | b1 << 8 | b2 << 16 | b3 << 24, every k-step is decoded with u = 11 and
// folded on its own with 2^(b_s - 133): exact, 4 waits.

#include <cstdint>
#include <span>
#include <vector>

#include "engine/common/status.h"
#include "engine/formats/matrix_dims.h"

namespace gcmoe::kernels {

inline constexpr int kMxTileRows = 64;
inline constexpr int kMxChunkK = 128;
inline constexpr int kMxCodeImageBytes = kMxTileRows * kMxChunkK / 2;  // 4096
inline constexpr int kMxScaleImageWords = 68;
inline constexpr int kMxFlagWord = 64;
inline constexpr int kMxMaxNarrowSpread = 11;  // max(b) - min(b) folded into e4m3 exponents
inline constexpr int kMxMinNarrowMax = 7;      // narrow rows need E = max(b) >= 7 (normal f32)
// LUT of e4m3 codes of the e2m1 magnitudes 0..7 times 2^-5 (u = 0), as two prmt source words.
inline constexpr std::uint32_t kMxLutLo = 0x14100800u;
inline constexpr std::uint32_t kMxLutHi = 0x24201c18u;

// One expert's MXFP4 projection as the DeepSeek checkpoint stores it: logical dims [out, in],
// packed e2m1 [out, in/2] (low nibble = element 2j), e8m0 scales [out, in/32].
struct Mxfp4WeightView {
  formats::MatrixDims dims;
  std::span<std::uint8_t const> packed;
  std::span<std::uint8_t const> scales;
};

struct PackedMxfp4Expert {
  std::int64_t tiles = 0;             // weight rows / 64
  std::int64_t chunks = 0;            // K / 128
  std::int64_t wide_tile_chunks = 0;  // how many took the per-32 path (for the load log)
  std::vector<std::uint8_t> codes;    // [tiles][chunks][4096]
  std::vector<std::uint32_t> scales;  // [tiles][chunks][68]
};

// Word index (0..1023) inside a code image of the word holding row `row` (0..63), k (0..127), and
// the nibble (0..7) of the value's magnitude inside it.
struct MxCodeSlot {
  int word = 0;
  int nibble = 0;
  int sign_bit = 0;  // bit (0..31) of the value's sign inside the word
};
MxCodeSlot mxfp4_wgmma_code_slot(int row, int k);

// Word index (0..63) of row `row`'s scale word inside a scale image.
constexpr int mxfp4_wgmma_scale_word(int row) {
  return ((row / 16) * 8 + row % 8) * 2 + (row % 16) / 8;
}

// The narrow row word of a row whose four e8m0 bytes have max E >= kMxMinNarrowMax and
// E - min <= kMxMaxNarrowSpread (layout header).
std::uint32_t mxfp4_wgmma_narrow_scale_word(std::uint8_t const (&bytes)[4]);

// L1: gate and up [I, H] each -> I/32 tiles. I % 128 == 0 (a CTA owns 128 outputs, one
// requantization group), H % 128 == 0, no NaN scale byte.
StatusOr<PackedMxfp4Expert> pack_gate_up_mxfp4_wgmma(Mxfp4WeightView const& gate,
                                                     Mxfp4WeightView const& up);

// L2: down [H, I] -> H/64 tiles. H % 128 == 0 and I % 128 == 0.
StatusOr<PackedMxfp4Expert> pack_down_mxfp4_wgmma(Mxfp4WeightView const& down);

// CPU twin of the kernel's register decode: the weight value (decoded e4m3 byte times the f32
// row or k-step scale) the kernel multiplies for (row, k) of one (tile, chunk).
float mxfp4_wgmma_kernel_weight(std::span<std::uint8_t const> codes,
                                std::span<std::uint32_t const> scales, int row, int k);

}  // namespace gcmoe::kernels
