#include "kernels/moe/fp8_expert_layout.h"

#include <cstring>

#include "engine/common/check.h"

namespace gcmoe::kernels {
namespace {

constexpr std::int64_t kScaleBlock = 128;

// Source of tile-local row r (0..15) of tile `tile`: which view and which of its rows.
struct RowSource {
  Fp8WeightView const* view = nullptr;
  std::int64_t row = 0;
};

template <typename RowOf>
PackedExpertWeights pack(std::int64_t tiles, std::int64_t cols, RowOf&& row_of) {
  PackedExpertWeights out;
  out.tiles = tiles;
  out.chunks = cols / kChunkK;
  out.bytes.resize(static_cast<std::size_t>(tiles * out.chunks * kChunkBytes));
  out.scales.resize(static_cast<std::size_t>(tiles * out.chunks * kScalesPerTileChunk));
  std::int64_t const scale_cols = (cols + kScaleBlock - 1) / kScaleBlock;
  for (std::int64_t tile = 0; tile < tiles; ++tile) {
    // The 16 source rows of this tile, resolved once (the load path packs gigabytes).
    std::uint8_t const* rows[kTileRows];
    for (int r = 0; r < kTileRows; ++r) {
      RowSource const src = row_of(tile, r);
      rows[r] = src.view->codes.data() + src.row * cols;
    }
    for (std::int64_t chunk = 0; chunk < out.chunks; ++chunk) {
      std::uint8_t* const dst = out.bytes.data() + (tile * out.chunks + chunk) * kChunkBytes;
      // Each 4-byte group of a lane is 4 consecutive K of one row (lane_byte_coord of its first
      // byte), so the chunk is copied 4 bytes at a time.
      for (int lane = 0; lane < 32; ++lane) {
        for (int byte = 0; byte < kLaneBytes; byte += 4) {
          TileCoord const at = lane_byte_coord(lane, byte);
          std::memcpy(dst + packed_offset(lane, byte), rows[at.row] + chunk * kChunkK + at.k, 4);
        }
      }
      for (int half = 0; half < kScalesPerTileChunk; ++half) {
        RowSource const src = row_of(tile, half * 8);
        out.scales[static_cast<std::size_t>((tile * out.chunks + chunk) * kScalesPerTileChunk +
                                            half)] =
            src.view
                ->scale_inv[static_cast<std::size_t>((src.row / kScaleBlock) * scale_cols + chunk)];
      }
    }
  }
  return out;
}

}  // namespace

Status check_fp8_weight_view(Fp8WeightView const& view, char const* name) {
  GCMOE_RETURN_IF_ERROR(formats::check_block_dims(view.dims, {kScaleBlock, kScaleBlock}));
  formats::MatrixDims const sdims = formats::scale_dims(view.dims, {kScaleBlock, kScaleBlock});
  GCMOE_CHECK_ARG(static_cast<std::int64_t>(view.codes.size()) == view.dims.elements(),
                  "{}: {} codes for [{}, {}]", name, view.codes.size(), view.dims.rows,
                  view.dims.cols);
  GCMOE_CHECK_ARG(static_cast<std::int64_t>(view.scale_inv.size()) == sdims.elements(),
                  "{}: {} scales, want [{}, {}]", name, view.scale_inv.size(), sdims.rows,
                  sdims.cols);
  GCMOE_CHECK_ARG(view.dims.cols % kChunkK == 0, "{}: K = {} is not a multiple of {}", name,
                  view.dims.cols, kChunkK);
  return Status();
}

TileCoord lane_byte_coord(int lane, int byte) {
  int const g = lane / 4;
  int const t = lane % 4;
  int const step = byte / 16;       // k-step s: 32 K each
  int const reg = (byte % 16) / 4;  // a0..a3
  int const element = byte % 4;
  TileCoord at;
  at.row = g + ((reg == 1 || reg == 3) ? 8 : 0);
  at.k = step * 32 + t * 4 + element + (reg >= 2 ? 16 : 0);
  return at;
}

StatusOr<PackedExpertWeights> pack_gate_up(Fp8WeightView const& gate, Fp8WeightView const& up) {
  GCMOE_RETURN_IF_ERROR(check_fp8_weight_view(gate, "gate"));
  GCMOE_RETURN_IF_ERROR(check_fp8_weight_view(up, "up"));
  GCMOE_CHECK_ARG(gate.dims == up.dims, "gate [{}, {}] and up [{}, {}] differ", gate.dims.rows,
                  gate.dims.cols, up.dims.rows, up.dims.cols);
  GCMOE_CHECK_ARG(gate.dims.rows % 8 == 0, "intermediate size {} is not a multiple of 8",
                  gate.dims.rows);
  return pack(gate.dims.rows / 8, gate.dims.cols, [&](std::int64_t tile, int row) {
    return RowSource{row < 8 ? &gate : &up, tile * 8 + row % 8};
  });
}

StatusOr<PackedExpertWeights> pack_down(Fp8WeightView const& down) {
  GCMOE_RETURN_IF_ERROR(check_fp8_weight_view(down, "down"));
  GCMOE_CHECK_ARG(down.dims.rows % kTileRows == 0, "hidden size {} is not a multiple of {}",
                  down.dims.rows, kTileRows);
  return pack(down.dims.rows / kTileRows, down.dims.cols, [&](std::int64_t tile, int row) {
    return RowSource{&down, tile * kTileRows + row};
  });
}

}  // namespace gcmoe::kernels
