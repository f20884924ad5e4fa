#include "kernels/moe/fp8_expert_wgmma_layout.h"

#include <cstring>

#include "engine/common/check.h"

namespace gcmoe::kernels {
namespace {

constexpr std::int64_t kScaleBlock = 128;

// The shared checks, and rows in whole 128-row blocks (a 64-row tile must not straddle two).
Status check_view(Fp8WeightView const& view, char const* name) {
  GCMOE_RETURN_IF_ERROR(check_fp8_weight_view(view, name));
  GCMOE_CHECK_ARG(view.dims.rows % kScaleBlock == 0, "{}: {} rows is not a multiple of {}", name,
                  view.dims.rows, kScaleBlock);
  return Status();
}

struct RowSource {
  Fp8WeightView const* view = nullptr;
  std::int64_t row = 0;
};

// tiles: a multiple of group_tiles (the callers' shape checks make it one).
template <typename RowOf>
PackedExpertWeights pack(std::int64_t tiles, std::int64_t cols, int group_tiles, RowOf&& row_of) {
  PackedExpertWeights out;
  out.tiles = tiles;
  out.chunks = cols / kChunkK;
  out.bytes.resize(static_cast<std::size_t>(tiles * out.chunks * kWgmmaChunkBytes));
  out.scales.resize(static_cast<std::size_t>(tiles * out.chunks * kWgmmaScalesPerTileChunk));
  std::int64_t const scale_cols = cols / kScaleBlock;
  for (std::int64_t tile = 0; tile < tiles; ++tile) {
    std::uint8_t const* rows[kWgmmaTileRows];
    for (int r = 0; r < kWgmmaTileRows; ++r) {
      RowSource const src = row_of(tile, r);
      rows[r] = src.view->codes.data() + src.row * cols;
    }
    for (std::int64_t chunk = 0; chunk < out.chunks; ++chunk) {
      std::uint8_t* const dst =
          out.bytes.data() +
          wgmma_image_index(tile, chunk, out.chunks, group_tiles) * kWgmmaChunkBytes;
      for (int r = 0; r < kWgmmaTileRows; ++r) {
        for (int k = 0; k < kChunkK; k += 16) {
          std::memcpy(dst + wgmma_swizzled_offset(r, k), rows[r] + chunk * kChunkK + k, 16);
        }
      }
      for (int half = 0; half < kWgmmaScalesPerTileChunk; ++half) {
        RowSource const src = row_of(tile, half * 8);
        out.scales[static_cast<std::size_t>((tile * out.chunks + chunk) * kWgmmaScalesPerTileChunk +
                                            half)] =
            src.view
                ->scale_inv[static_cast<std::size_t>((src.row / kScaleBlock) * scale_cols + chunk)];
      }
    }
  }
  return out;
}

}  // namespace

StatusOr<PackedExpertWeights> pack_gate_up_wgmma(Fp8WeightView const& gate,
                                                 Fp8WeightView const& up) {
  GCMOE_RETURN_IF_ERROR(check_view(gate, "gate"));
  GCMOE_RETURN_IF_ERROR(check_view(up, "up"));
  GCMOE_CHECK_ARG(gate.dims == up.dims, "gate [{}, {}] and up [{}, {}] differ", gate.dims.rows,
                  gate.dims.cols, up.dims.rows, up.dims.cols);
  // I % 128 == 0: I / 32 tiles, a multiple of the group's 4.
  return pack(gate.dims.rows / 32, gate.dims.cols, kWgmmaGateUpGroupTiles,
              [&](std::int64_t tile, int row) {
                GateUpSource const src = gate_up_source(tile, row);
                return RowSource{src.up ? &up : &gate, src.output};
              });
}

StatusOr<PackedExpertWeights> pack_down_wgmma(Fp8WeightView const& down) {
  GCMOE_RETURN_IF_ERROR(check_view(down, "down"));
  // H % 128 == 0: H / 64 tiles, a multiple of the group's 2.
  return pack(down.dims.rows / kWgmmaTileRows, down.dims.cols, kWgmmaDownGroupTiles,
              [&](std::int64_t tile, int row) {
                return RowSource{&down, tile * kWgmmaTileRows + row};
              });
}

}  // namespace gcmoe::kernels
