#pragma once
// The weight layout of the WGMMA FP8 expert GEMM (kernels/moe/fp8_expert_wgmma.h), made once at
// load time.
//
// Swap-AB: weight rows are WGMMA's M (one m64 tile per warpgroup), tokens its N. K is walked in
// chunks of 128 (one 128×128 scale block wide). Each (tile, chunk) is stored as the exact shared
// memory image WGMMA reads with the 128-byte swizzle: 64 rows of 128 bytes, the 16-byte unit u of
// row r at unit u ^ (r % 8). One 8 KB bulk copy (TMA, no tensor map) moves it into a 1024-byte
// aligned slot; no thread touches the bytes.
//
// Row order inside a 64-row tile: four 16-row slices, one per warp of the warpgroup (WGMMA's
// accumulator gives warp w rows 16w..16w+15, lane l rows 16w + l/4 and 16w + l/4 + 8). L1
// (gate/up) slices hold 8 gate rows then the same 8 outputs' up rows, so a thread holds gate and up
// of one output (fused SwiGLU): tile t, slice w, row g → output 32t + 8w + g. L2 (down) tiles are
// 64 consecutive rows. Every (tile, chunk) carries two f32 scale_inv: gate's and up's (L1), the
// same value twice (L2) — all 64 rows of a tile sit in one 128-row scale block; the L2 kernels
// read the first (v2.18).
//
// Image order (v2.14): tiles in groups of a CTA's warpgroups (L1 4, L2 2), and per group chunk by
// chunk, the group's images of one chunk side by side: [group][chunk][tile in group][8192]. A
// stage of the kernel (one chunk of one group) is then one bulk copy of 32 KB (L1) or 16 KB (L2)
// instead of one per tile; each copy operation costs the SM's copy unit time of its own
// (bench/NOTES.md, FP8 v2.12: 8 copies per stage 1.5–3% slower than 4, one 1.5% faster). The
// scales stay [tiles][chunks][2].

#include <cstdint>

#include "engine/common/status.h"
#include "kernels/moe/fp8_expert_layout.h"

namespace gcmoe::kernels {

// Where row `row` (0..63) of L1 (gate/up) tile `tile` comes from, by the slice order above: the up
// projection or the gate, and which output row of it. Shared with the MXFP4 layout.
struct GateUpSource {
  bool up = false;
  std::int64_t output = 0;
};
constexpr GateUpSource gate_up_source(std::int64_t tile, int row) {
  return {.up = row % 16 >= 8, .output = tile * 32 + row / 16 * 8 + row % 8};
}

inline constexpr int kWgmmaTileRows = 64;
inline constexpr int kWgmmaChunkBytes = kWgmmaTileRows * kChunkK;  // 8192
inline constexpr int kWgmmaScalesPerTileChunk = 2;

// Tiles per image group: the CTA's warpgroups of each projection (fp8_expert_wgmma.cu's configs).
inline constexpr int kWgmmaGateUpGroupTiles = 4;
inline constexpr int kWgmmaDownGroupTiles = 2;

// Index of the (tile, chunk) image in a projection's bytes (in units of kWgmmaChunkBytes), for
// `chunks` chunks per tile and groups of `group_tiles` tiles.
constexpr std::int64_t wgmma_image_index(std::int64_t tile, std::int64_t chunk, std::int64_t chunks,
                                         int group_tiles) {
  return ((tile / group_tiles) * chunks + chunk) * group_tiles + tile % group_tiles;
}

// Byte offset of (row, k) inside one swizzled 64×128 tile chunk (row 0..63, k 0..127).
constexpr int wgmma_swizzled_offset(int row, int k) {
  return row * kChunkK + ((((k >> 4) ^ (row & 7)) << 4) | (k & 15));
}

// L1: gate and up [I, H] each → I/32 tiles of 64 rows. I % 128 == 0 (a CTA owns 128 outputs,
// one requantization group) and H % 128 == 0. `bytes` [tiles / 4][chunks][4][8192], `scales`
// [tiles][chunks][2].
StatusOr<PackedExpertWeights> pack_gate_up_wgmma(Fp8WeightView const& gate,
                                                 Fp8WeightView const& up);

// L2: down [H, I] → H/64 tiles, `bytes` [tiles / 2][chunks][2][8192]. H % 128 == 0 and
// I % 128 == 0.
StatusOr<PackedExpertWeights> pack_down_wgmma(Fp8WeightView const& down);

}  // namespace gcmoe::kernels
