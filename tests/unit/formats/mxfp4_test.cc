// MXFP4: nibble order, scale choice, round trip with its error bound, NaN scale, bad shapes.
#include "engine/formats/mxfp4.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/formats/e2m1.h"
#include "engine/formats/e8m0.h"
#include "tests/support/catch.h"
#include "tests/unit/formats/block_test_support.h"

namespace gcmoe::formats {
namespace {

using testing::gaussian;
using testing::relative_l2;

TEST_CASE("MXFP4 packs element 2j in the low nibble and 2j+1 in the high nibble") {
  MatrixDims const dims{1, 32};
  std::vector<float> w(32, 0.0f);
  w[0] = 0.5f;
  w[1] = 1.0f;
  w[2] = -6.0f;  // amax 6: scale 2^0
  w[3] = 3.0f;
  auto const q = quantize_mxfp4(w, dims);
  REQUIRE(q.ok());
  REQUIRE(q->packed.size() == 16);
  REQUIRE(q->scales.size() == 1);
  CHECK(q->scales[0] == 127);
  CHECK(q->packed[0] == 0x21);  // "byte 0x21 = 0.5 then 1.0 in source order"
  CHECK(q->packed[1] == 0x5f);  // -6 = 0xf low, 3 = 0x5 high
  std::vector<float> back(32);
  REQUIRE(dequantize_mxfp4(q->packed, q->scales, dims, back).ok());
  CHECK(back == w);  // every value is on the e2m1 grid at scale 1
}

TEST_CASE("MXFP4 round trip of expert-like weights stays within half a grid step") {
  MatrixDims const dims{96, 256};  // on disk: I8 [96, 128] + e8m0 [96, 8]
  CHECK(mxfp4_packed_dims(dims) == MatrixDims{96, 128});
  CHECK(mxfp4_scale_dims(dims) == MatrixDims{96, 8});
  std::vector<float> const w = gaussian(static_cast<std::size_t>(dims.elements()), 0.02f, 5);
  auto const q = quantize_mxfp4(w, dims);
  REQUIRE(q.ok());
  std::vector<float> back(w.size());
  REQUIRE(dequantize_mxfp4(q->packed, q->scales, dims, back).ok());
  for (std::int64_t r = 0; r < dims.rows; ++r) {
    for (std::int64_t b = 0; b < 8; ++b) {
      float const scale = decode_e8m0(q->scales[static_cast<std::size_t>(r * 8 + b)]);
      float amax = 0.0f;
      for (std::int64_t k = 0; k < 32; ++k) {
        amax = std::max(amax, std::fabs(w[static_cast<std::size_t>(r * 256 + b * 32 + k)]));
      }
      // Power-of-two scale 2^ceil(log2(amax / 6)): amax / scale in (3, 6], no clipping.
      CHECK(amax / scale > 3.0f);
      CHECK(amax / scale <= 6.0f);
      for (std::int64_t k = 0; k < 32; ++k) {
        auto const i = static_cast<std::size_t>(r * 256 + b * 32 + k);
        float const x = std::fabs(w[i]) / scale;
        // Grid step is 0.5 below 2, 1 below 4, 2 up to 6: the error is at most half of it.
        float const half_step = x < 2.0f ? 0.25f : x < 4.0f ? 0.5f : 1.0f;
        REQUIRE(std::fabs(back[i] - w[i]) <= half_step * scale);
      }
    }
  }
  double const error = relative_l2(back, w);
  INFO("relative L2 error " << error);
  CHECK(error < 0.15);  // e2m1 has one mantissa bit: ~10% on Gaussian blocks of 32
  CHECK(error > 0.01);
}

TEST_CASE("MXFP4 dequantization honours the NaN scale byte per 32-element block") {
  MatrixDims const dims{1, 64};
  std::vector<std::uint8_t> const packed(32, 0x22);  // every element 1.0
  std::vector<std::uint8_t> const scales = {kE8m0NanCode, 128};
  std::vector<float> out(64);
  REQUIRE(dequantize_mxfp4(packed, scales, dims, out).ok());
  CHECK(std::all_of(out.begin(), out.begin() + 32, [](float v) { return std::isnan(v); }));
  CHECK(std::all_of(out.begin() + 32, out.end(), [](float v) { return v == 2.0f; }));
}

TEST_CASE("MXFP4 rejects K not a multiple of 32 and mismatched buffers") {
  std::vector<float> const w(48, 0.1f);
  CHECK(quantize_mxfp4(w, {1, 48}).status().code() == StatusCode::kInvalidArgument);
  std::vector<std::uint8_t> const packed(16);
  std::vector<std::uint8_t> const scales(2);  // [1, 32] has one scale
  std::vector<float> out(32);
  CHECK(dequantize_mxfp4(packed, scales, {1, 32}, out).code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gcmoe::formats
