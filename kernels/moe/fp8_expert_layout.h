#pragma once
// The weight layout of the FP8 expert GEMM (kernels/moe/fp8_expert_gemm.h), made once at load time.
//
// Swap-AB: weight rows are the MMA's M, tokens its N. A warp owns a *tile* of 16 weight rows and
// walks K in *chunks* of 128 (one 128×128 scale block wide). For each (tile, chunk) the 16×128
// FP8 bytes are stored in the order the m16n8k32 FP8 `mma.sync` A-fragment wants them: lane
// (g = lane/4, t = lane%4) holds, for each of the 4 k-steps s, 16 bytes
//   row g   k = 32s + 4t .. +3,  row g+8  k = 32s + 4t .. +3,
//   row g   k = 32s + 16 + 4t .. +3,  row g+8  k = 32s + 16 + 4t .. +3
// stored k-step major — [step][lane][16 bytes] — so each k-step of a warp is 512 contiguous bytes
// and a warp streams a 2 KB chunk with four fully coalesced 16-byte-per-lane loads.
//
// L1 (gate/up) tiles interleave: rows 0..7 of tile i are gate rows 8i..8i+7, rows 8..15 the up
// rows 8i..8i+7, so each thread holds the gate and up value of the same output (fused SwiGLU).
// L2 (down) tiles are 16 consecutive rows. Every (tile, chunk) carries two f32 scales: the
// scale_inv of its top 8 rows and of its bottom 8 rows (equal for down).

#include <cstdint>
#include <span>
#include <vector>

#include "engine/common/status.h"
#include "engine/formats/matrix_dims.h"

namespace gcmoe::kernels {

inline constexpr int kTileRows = 16;
inline constexpr int kChunkK = 128;
inline constexpr int kLaneBytes = 64;
inline constexpr int kChunkBytes = 32 * kLaneBytes;  // 2048
inline constexpr int kScalesPerTileChunk = 2;

// One expert's FP8 projection as the GLM-5.2-FP8 checkpoint stores it: e4m3 codes [rows, cols]
// and f32 weight_scale_inv [ceil(rows/128), ceil(cols/128)].
struct Fp8WeightView {
  formats::MatrixDims dims;
  std::span<std::uint8_t const> codes;
  std::span<float const> scale_inv;
};

// INVALID_ARGUMENT unless `view` is a whole-block FP8 matrix with f32 128×128 scales and K a
// multiple of 128 (`name` for the message).
Status check_fp8_weight_view(Fp8WeightView const& view, char const* name);

struct PackedExpertWeights {
  std::int64_t tiles = 0;           // weight rows / 16
  std::int64_t chunks = 0;          // K / 128
  std::vector<std::uint8_t> bytes;  // [tiles][chunks][4 steps][32 lanes][16]
  std::vector<float> scales;        // [tiles][chunks][2]
};

// (row, k) of byte `byte` (0..63) of lane `lane` inside a 16×128 tile chunk: the inverse map
// the kernel relies on. Rows are tile-local (0..15), k chunk-local (0..127).
struct TileCoord {
  int row = 0;
  int k = 0;
};
TileCoord lane_byte_coord(int lane, int byte);

// Offset inside a packed 2 KB chunk of byte `byte` (0..63) of lane `lane`.
constexpr int packed_offset(int lane, int byte) {
  return (byte / 16) * 512 + lane * 16 + byte % 16;
}

// L1: gate and up [I, H] each → I/8 interleaved tiles. I % 8 == 0 and H % 128 == 0.
StatusOr<PackedExpertWeights> pack_gate_up(Fp8WeightView const& gate, Fp8WeightView const& up);

// L2: down [H, I] → H/16 tiles. H % 16 == 0 and I % 128 == 0.
StatusOr<PackedExpertWeights> pack_down(Fp8WeightView const& down);

}  // namespace gcmoe::kernels
