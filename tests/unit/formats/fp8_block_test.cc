// FP8 block formats: round trips with stated error bounds, scale choice, shapes, edge scales.
#include "engine/formats/fp8_block.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "engine/formats/e4m3.h"
#include "engine/formats/e8m0.h"
#include "tests/support/catch.h"
#include "tests/unit/formats/block_test_support.h"

namespace gcmoe::formats {
namespace {

using testing::gaussian;
using testing::relative_l2;

// Largest |w| of block (br, bc).
float block_amax(std::vector<float> const& w, MatrixDims const dims, BlockShape const block,
                 std::int64_t const br, std::int64_t const bc) {
  float amax = 0.0f;
  for (std::int64_t r = br * block.rows; r < std::min(dims.rows, (br + 1) * block.rows); ++r) {
    for (std::int64_t c = bc * block.cols; c < std::min(dims.cols, (bc + 1) * block.cols); ++c) {
      amax = std::max(amax, std::fabs(w[static_cast<std::size_t>(r * dims.cols + c)]));
    }
  }
  return amax;
}

// Rounding to e4m3 moves a value by at most half an ulp: 2^-4 of its magnitude for normals,
// 2^-10 of the block scale in the subnormal range.
void check_elementwise(std::vector<float> const& w, std::vector<float> const& back,
                       std::vector<float> const& block_scale_of) {
  for (std::size_t i = 0; i < w.size(); ++i) {
    float const bound = std::max(std::fabs(w[i]) * 0x1p-4f, block_scale_of[i] * 0x1p-10f);
    INFO("element " << i << " w " << w[i] << " back " << back[i]);
    REQUIRE(std::fabs(back[i] - w[i]) <= bound * 1.0001f);
  }
}

template <typename ScaleAt>
std::vector<float> per_element_scale(MatrixDims const dims, BlockShape const block,
                                     ScaleAt&& scale_at) {
  MatrixDims const sdims = scale_dims(dims, block);
  std::vector<float> out(static_cast<std::size_t>(dims.elements()));
  for (std::int64_t r = 0; r < dims.rows; ++r) {
    for (std::int64_t c = 0; c < dims.cols; ++c) {
      out[static_cast<std::size_t>(r * dims.cols + c)] =
          scale_at((r / block.rows) * sdims.cols + c / block.cols);
    }
  }
  return out;
}

TEST_CASE("FP8 with e8m0 block scales round-trips within e4m3 precision (V4 128x128, V4.1 32x32)") {
  struct Shape {
    MatrixDims dims;
    BlockShape block;
  };
  for (Shape const shape : {Shape{{256, 384}, kBlock128}, Shape{{200, 300}, kBlock128},
                            Shape{{70, 100}, kBlock32}, Shape{{64, 96}, BlockShape{1, 32}}}) {
    MatrixDims const dims = shape.dims;
    std::vector<float> const w = gaussian(static_cast<std::size_t>(dims.elements()), 0.02f, 7);
    auto const q = quantize_fp8_e8m0(w, dims, shape.block);
    REQUIRE(q.ok());
    MatrixDims const sdims = scale_dims(dims, shape.block);
    CHECK(sdims.rows == (dims.rows + shape.block.rows - 1) / shape.block.rows);
    REQUIRE(q->scales.size() == static_cast<std::size_t>(sdims.elements()));
    // Power-of-two scales chosen as 2^ceil(log2(amax / 448)): amax / scale in (224, 448].
    for (std::int64_t br = 0; br < sdims.rows; ++br) {
      for (std::int64_t bc = 0; bc < sdims.cols; ++bc) {
        float const scale = decode_e8m0(q->scales[static_cast<std::size_t>(br * sdims.cols + bc)]);
        float const ratio = block_amax(w, dims, shape.block, br, bc) / scale;
        CHECK(ratio > 224.0f);
        CHECK(ratio <= 448.0f);
      }
    }
    std::vector<float> back(w.size());
    REQUIRE(dequantize_fp8_e8m0(q->codes, q->scales, dims, shape.block, back).ok());
    check_elementwise(w, back, per_element_scale(dims, shape.block, [&](std::int64_t s) {
                        return decode_e8m0(q->scales[static_cast<std::size_t>(s)]);
                      }));
    double const error = relative_l2(back, w);
    INFO("relative L2 error " << error);
    CHECK(error < 0.035);  // uniform rounding over 3 mantissa bits: ~2.5% on Gaussian data
    CHECK(error > 0.0);
  }
}

TEST_CASE("FP8 with f32 weight_scale_inv (GLM-5.2) round-trips; block maxima hit ±448 exactly") {
  MatrixDims const dims{300, 200};
  std::vector<float> const w = gaussian(static_cast<std::size_t>(dims.elements()), 0.02f, 11);
  auto const q = quantize_fp8_f32(w, dims, kBlock128);
  REQUIRE(q.ok());
  REQUIRE(q->scale_inv.size() == 3 * 2);
  for (std::int64_t br = 0; br < 3; ++br) {
    for (std::int64_t bc = 0; bc < 2; ++bc) {
      CHECK(q->scale_inv[static_cast<std::size_t>(br * 2 + bc)] ==
            block_amax(w, dims, kBlock128, br, bc) / 448.0f);
    }
  }
  CHECK(std::count_if(q->codes.begin(), q->codes.end(), [](std::uint8_t c) {
          return (c & 0x7f) == kE4m3MaxCode;
        }) >= 6);  // one per block at least
  std::vector<float> back(w.size());
  REQUIRE(dequantize_fp8_f32(q->codes, q->scale_inv, dims, kBlock128, back).ok());
  check_elementwise(w, back, per_element_scale(dims, kBlock128, [&](std::int64_t s) {
                      return q->scale_inv[static_cast<std::size_t>(s)];
                    }));
  double const error = relative_l2(back, w);
  INFO("relative L2 error " << error);
  CHECK(error < 0.035);
}

TEST_CASE("FP8 e8m0 dequantization: NaN scale byte, scales outside the e4m3 window") {
  MatrixDims const dims{2, 64};
  BlockShape const block{1, 32};
  std::vector<std::uint8_t> codes(128, 0x38);  // e4m3 1.0
  codes[1] = 0x01;                             // smallest subnormal, 2^-9
  codes[64] = 0xbe;                            // e4m3 -1.75
  // Scales: block (0,0) tiny 2^-127, (0,1) NaN, (1,0) huge 2^127, (1,1) 1.
  std::vector<std::uint8_t> const scales = {0, kE8m0NanCode, 254, 127};
  std::vector<float> out(128);
  REQUIRE(dequantize_fp8_e8m0(codes, scales, dims, block, out).ok());
  CHECK(out[0] == std::ldexp(1.0f, -127));
  CHECK(out[1] == std::ldexp(1.0f, -136));  // 2^-9 * 2^-127, an exact fp32 subnormal
  for (std::size_t i = 32; i < 64; ++i) {
    CHECK(std::isnan(out[i]));  // only the NaN-scaled block
  }
  CHECK(out[64] == -1.75f * std::ldexp(1.0f, 127));
  CHECK(std::isinf(out[64] * 2.0f));
  CHECK(out[96] == 1.0f);
  CHECK_FALSE(std::isnan(out[31]));
}

TEST_CASE("FP8 quantization of tiny, huge and zero blocks") {
  MatrixDims const dims{4, 32};
  for (float const magnitude : {1e-30f, 1e-6f, 1e30f}) {
    std::vector<float> w = gaussian(128, magnitude, 3);
    auto const q = quantize_fp8_e8m0(w, dims, BlockShape{4, 32});
    REQUIRE(q.ok());
    std::vector<float> back(w.size());
    REQUIRE(dequantize_fp8_e8m0(q->codes, q->scales, dims, BlockShape{4, 32}, back).ok());
    auto const scale = decode_e8m0(q->scales[0]);
    check_elementwise(w, back, std::vector<float>(w.size(), scale));
    if (magnitude < 1e-4f) {
      // amax is clamped to 1e-4 (the reference's floor): the scale stays 2^-22.
      CHECK(q->scales[0] == e8m0_from_exponent(-22));
    } else {
      CHECK(relative_l2(back, w) < 0.035);
    }
  }
  std::vector<float> const zeros(128, 0.0f);
  auto const q = quantize_fp8_f32(zeros, dims, BlockShape{4, 32});
  REQUIRE(q.ok());
  CHECK(q->scale_inv[0] == 1e-4f / 448.0f);
  CHECK(std::all_of(q->codes.begin(), q->codes.end(), [](std::uint8_t c) { return c == 0; }));
}

TEST_CASE("FP8 block formats reject bad sizes and non-finite weights") {
  std::vector<float> w(100, 0.5f);
  CHECK(quantize_fp8_e8m0(w, {10, 11}, kBlock32).status().code() == StatusCode::kInvalidArgument);
  CHECK(quantize_fp8_f32(w, {10, 10}, {0, 4}).status().code() == StatusCode::kInvalidArgument);
  w[17] = std::numeric_limits<float>::infinity();
  CHECK(quantize_fp8_f32(w, {10, 10}, kBlock32).status().code() == StatusCode::kInvalidArgument);
  std::vector<std::uint8_t> const codes(100);
  std::vector<std::uint8_t> const two_scales(2);
  std::vector<float> out(100);
  // [10, 10] in 32x32 blocks has one scale, not two.
  Status const status = dequantize_fp8_e8m0(codes, two_scales, {10, 10}, kBlock32, out);
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK(status.message().find("scales") != std::string::npos);
}

}  // namespace
}  // namespace gcmoe::formats
