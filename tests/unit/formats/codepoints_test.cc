// Every code point of e4m3, e2m1 and e8m0, and ml_dtypes' rounding of thousands of inputs
// (ties, subnormals, ±0, overflow), from the committed fixture written by
// scripts/fixtures/make_format_codepoints.py. No Python is needed here.
#include <bit>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "engine/formats/bf16.h"
#include "engine/formats/e2m1.h"
#include "engine/formats/e4m3.h"
#include "engine/formats/e8m0.h"
#include "tests/support/catch.h"

namespace gcmoe::formats {
namespace {

struct Case {
  std::uint32_t input = 0;
  std::uint32_t expected = 0;
};

// cases["decode e4m3"], cases["encode bf16"], ...
std::map<std::string, std::vector<Case>> load_fixture() {
  std::ifstream in(GCMOE_FORMATS_FIXTURE);
  REQUIRE(in.good());
  std::map<std::string, std::vector<Case>> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') {
      continue;
    }
    std::istringstream fields(line);
    std::string kind;
    std::string format;
    Case c;
    fields >> kind >> format >> std::hex >> c.input >> c.expected;
    REQUIRE_FALSE(fields.fail());
    cases[kind + " " + format].push_back(c);
  }
  return cases;
}

std::map<std::string, std::vector<Case>> const& fixture() {
  static std::map<std::string, std::vector<Case>> const cases = load_fixture();
  return cases;
}

float as_float(std::uint32_t const bits) {
  return std::bit_cast<float>(bits);
}

// Same fp32 bits, or both NaN (NaN payloads are not part of any format here).
bool same_value(float const actual, std::uint32_t const expected_bits) {
  float const expected = as_float(expected_bits);
  if (std::isnan(expected)) {
    return std::isnan(actual);
  }
  return std::bit_cast<std::uint32_t>(actual) == expected_bits;
}

template <typename Decode>
void check_decode(std::string const& format, std::size_t const count, Decode&& decode) {
  auto const& cases = fixture().at("decode " + format);
  REQUIRE(cases.size() == count);
  for (Case const& c : cases) {
    INFO(format << " code 0x" << std::hex << c.input << " ml_dtypes bits 0x" << c.expected);
    CHECK(same_value(decode(static_cast<std::uint8_t>(c.input)), c.expected));
  }
}

TEST_CASE("every e4m3, e2m1 and e8m0 code decodes as ml_dtypes does") {
  check_decode("e4m3", 256, decode_e4m3);
  check_decode("e2m1", 16, decode_e2m1);
  check_decode("e8m0", 256, decode_e8m0);
}

TEST_CASE("e4m3 encode matches ml_dtypes, saturating where ml_dtypes overflows to NaN") {
  auto const& cases = fixture().at("encode e4m3");
  REQUIRE(cases.size() > 1000);
  int saturated = 0;
  for (Case const& c : cases) {
    float const x = as_float(c.input);
    std::uint8_t const got = encode_e4m3(x);
    INFO("x = " << x << " (0x" << std::hex << c.input << ") ml_dtypes 0x" << c.expected << " got 0x"
                << int{got});
    bool const ml_nan = (c.expected & 0x7f) == kE4m3NanCode;
    if (ml_nan && !std::isnan(x)) {
      // ml_dtypes (like torch) overflows to NaN; the engine saturates, as every recipe clamps.
      CHECK(std::fabs(x) >= kE4m3Max);
      CHECK(got == static_cast<std::uint8_t>((c.expected & 0x80) | kE4m3MaxCode));
      ++saturated;
    } else {
      CHECK(got == c.expected);
    }
  }
  CHECK(saturated > 10);  // the fixture does exercise overflow
}

TEST_CASE("e2m1, e8m0 and bf16 encode match ml_dtypes bit for bit") {
  for (std::string const format : {"e2m1", "e8m0", "bf16"}) {
    auto const& cases = fixture().at("encode " + format);
    REQUIRE(cases.size() > 500);
    for (Case const& c : cases) {
      float const x = as_float(c.input);
      std::uint32_t const got = format == "e2m1"   ? encode_e2m1(x)
                                : format == "e8m0" ? encode_e8m0(x)
                                                   : encode_bf16(x);
      INFO(format << " x = " << x << " (0x" << std::hex << c.input << ") ml_dtypes 0x" << c.expected
                  << " got 0x" << got);
      CHECK(got == c.expected);
    }
  }
}

TEST_CASE("bf16 decode is exact and encode inverts it for every non-NaN code") {
  for (std::uint32_t code = 0; code < 65536; ++code) {
    auto const bits = static_cast<std::uint16_t>(code);
    float const value = decode_bf16(bits);
    CHECK(std::bit_cast<std::uint32_t>(value) == code << 16);
    if (!std::isnan(value)) {
      CHECK(encode_bf16(value) == bits);
    }
  }
}

TEST_CASE("e4m3 and e8m0 decode then encode is the identity on every non-NaN code") {
  for (int code = 0; code < 256; ++code) {
    auto const byte = static_cast<std::uint8_t>(code);
    if ((byte & 0x7f) != kE4m3NanCode) {
      CHECK(encode_e4m3(decode_e4m3(byte)) == byte);
    }
    if (byte != kE8m0NanCode) {
      CHECK(encode_e8m0(decode_e8m0(byte)) == byte);
    }
  }
  for (int code = 0; code < 16; ++code) {
    CHECK(encode_e2m1(decode_e2m1(static_cast<std::uint8_t>(code))) == code);
  }
}

}  // namespace
}  // namespace gcmoe::formats
