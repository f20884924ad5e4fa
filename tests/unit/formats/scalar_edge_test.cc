// Edge cases of the scalar codecs that the ml_dtypes fixture leaves to the engine's own rules.
#include <cmath>
#include <cstdint>
#include <limits>

#include "engine/formats/e2m1.h"
#include "engine/formats/e4m3.h"
#include "engine/formats/e8m0.h"
#include "tests/support/catch.h"

namespace gcmoe::formats {
namespace {

TEST_CASE("e4m3 signed zeros, subnormals and the range edges") {
  CHECK(encode_e4m3(0.0f) == 0x00);
  CHECK(encode_e4m3(-0.0f) == 0x80);
  CHECK(std::signbit(decode_e4m3(0x80)));
  CHECK(decode_e4m3(0x01) == std::ldexp(1.0f, -9));  // smallest subnormal
  CHECK(decode_e4m3(0x07) == 7 * std::ldexp(1.0f, -9));
  CHECK(decode_e4m3(0x08) == std::ldexp(1.0f, -6));  // smallest normal
  CHECK(decode_e4m3(0x7e) == 448.0f);
  CHECK(decode_e4m3(0xfe) == -448.0f);
  CHECK(std::isnan(decode_e4m3(0x7f)));
  CHECK(std::isnan(decode_e4m3(0xff)));
  // Half the smallest subnormal is a tie and rounds to even (zero); just above it rounds up.
  CHECK(encode_e4m3(std::ldexp(1.0f, -10)) == 0x00);
  CHECK(encode_e4m3(std::nextafter(std::ldexp(1.0f, -10), 1.0f)) == 0x01);
  CHECK(encode_e4m3(-std::ldexp(1.0f, -10)) == 0x80);
  // Saturation instead of NaN, infinities included; NaN keeps its sign.
  CHECK(encode_e4m3(464.0f) == 0x7e);
  CHECK(encode_e4m3(-1e30f) == 0xfe);
  CHECK(encode_e4m3(std::numeric_limits<float>::infinity()) == 0x7e);
  CHECK(encode_e4m3(std::numeric_limits<float>::quiet_NaN()) == 0x7f);
  CHECK(encode_e4m3(-std::numeric_limits<float>::quiet_NaN()) == 0xff);
}

TEST_CASE("e8m0 NaN byte, extremes and fp32-subnormal inputs") {
  CHECK(std::isnan(decode_e8m0(0xff)));
  CHECK(decode_e8m0(127) == 1.0f);
  CHECK(decode_e8m0(0) == std::ldexp(1.0f, -127));  // an fp32 subnormal, exactly
  CHECK(decode_e8m0(254) == std::ldexp(1.0f, 127));
  // Below 2^-126 the input is an fp32 subnormal: nearest power of two, saturating at 2^-127.
  // (ml_dtypes rounds the raw bit field there and would give byte 1 for 1.49 * 2^-127.)
  CHECK(encode_e8m0(std::ldexp(1.0f, -127)) == 0);
  CHECK(encode_e8m0(std::ldexp(1.49f, -127)) == 0);
  CHECK(encode_e8m0(std::ldexp(1.5f, -127)) == 1);
  CHECK(encode_e8m0(std::ldexp(1.0f, -149)) == 0);
  CHECK(encode_e8m0(0.0f) == kE8m0NanCode);
  CHECK(encode_e8m0(-2.0f) == kE8m0NanCode);
  CHECK(encode_e8m0(std::ldexp(1.5f, 127)) == kE8m0NanCode);  // rounds to 2^128
  CHECK(e8m0_from_exponent(-127) == 0);
  CHECK(e8m0_from_exponent(127) == 254);
  CHECK(e8m0_from_exponent(128) == kE8m0NanCode);
  CHECK(e8m0_from_exponent(-128) == kE8m0NanCode);
}

TEST_CASE("log2_ceil gives the smallest power of two at or above the value") {
  CHECK(log2_ceil(1.0f) == 0);
  CHECK(log2_ceil(std::nextafter(1.0f, 2.0f)) == 1);
  CHECK(log2_ceil(0.75f) == 0);
  CHECK(log2_ceil(448.0f) == 9);
  CHECK(log2_ceil(std::ldexp(1.0f, -100)) == -100);
  for (float v = 1e-30f; v < 1e30f; v *= 3.7f) {
    int const e = log2_ceil(v);
    CHECK(std::ldexp(1.0f, e) >= v);
    CHECK(std::ldexp(1.0f, e - 1) < v);
  }
}

TEST_CASE("e2m1 signs, ties, saturation and NaN") {
  CHECK(encode_e2m1(-0.0f) == 0x8);
  CHECK(encode_e2m1(-0.1f) == 0x8);  // rounds to zero, keeps the sign
  CHECK(encode_e2m1(0.25f) == 0x0);  // tie: even code 0
  CHECK(encode_e2m1(0.75f) == 0x2);  // tie between 0.5 (code 1) and 1 (code 2)
  CHECK(encode_e2m1(5.0f) == 0x6);   // tie between 4 (code 6) and 6 (code 7)
  CHECK(encode_e2m1(5.01f) == 0x7);
  CHECK(encode_e2m1(100.0f) == 0x7);
  CHECK(encode_e2m1(-std::numeric_limits<float>::infinity()) == 0xf);
  CHECK(encode_e2m1(std::numeric_limits<float>::quiet_NaN()) == 0x0);
  CHECK(pack_e2m1_pair(encode_e2m1(0.5f), encode_e2m1(1.0f)) == 0x21);  // model-spec §3.1
}

}  // namespace
}  // namespace gcmoe::formats
