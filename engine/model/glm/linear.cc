#include "engine/model/glm/linear.h"

#include <cstddef>

namespace gcmoe::model::glm {

float dot(float const* a, float const* b, std::int64_t const n) {
  // Eight independent partial sums: the loop pipelines (and vectorizes) without reassociation.
  float acc[8] = {};
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) {
      acc[j] += a[i + j] * b[i + j];
    }
  }
  for (; i < n; ++i) {
    acc[i % 8] += a[i] * b[i];
  }
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

namespace {

// Four rows against one weight row, each accumulated exactly as dot() does (so a row's result does
// not depend on how many rows share the call), loading the weight row once.
void dot4(float const* x, std::int64_t const in, float const* w, float* out) {
  float acc[4][8] = {};
  std::int64_t i = 0;
  for (; i + 8 <= in; i += 8) {
    for (int r = 0; r < 4; ++r) {
      for (int j = 0; j < 8; ++j) {
        acc[r][j] += x[r * in + i + j] * w[i + j];
      }
    }
  }
  for (; i < in; ++i) {
    for (int r = 0; r < 4; ++r) {
      acc[r][i % 8] += x[r * in + i] * w[i];
    }
  }
  for (int r = 0; r < 4; ++r) {
    float const* a = acc[r];
    out[r] = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
  }
}

}  // namespace

void linear(std::span<float const> x, std::span<float const> w, std::int64_t const in,
            std::int64_t const out, std::span<float> y) {
  std::int64_t const rows = in > 0 ? static_cast<std::int64_t>(x.size()) / in : 0;
  std::int64_t r = 0;
  float four[4];
  for (; r + 4 <= rows; r += 4) {
    for (std::int64_t o = 0; o < out; ++o) {
      dot4(x.data() + r * in, in, w.data() + o * in, four);
      for (int k = 0; k < 4; ++k) {
        y[static_cast<std::size_t>((r + k) * out + o)] = four[k];
      }
    }
  }
  for (; r < rows; ++r) {
    float const* xr = x.data() + r * in;
    float* yr = y.data() + r * out;
    for (std::int64_t o = 0; o < out; ++o) {
      yr[o] = dot(xr, w.data() + o * in, in);
    }
  }
}

}  // namespace gcmoe::model::glm
