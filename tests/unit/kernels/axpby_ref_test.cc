#include "kernels/elementwise/axpby_ref.h"

#include <vector>

#include "tests/support/catch.h"

namespace gcmoe::kernels {
namespace {

TEST_CASE("axpby reference computes a*x + b*y") {
  std::vector<float> const x = {1.0f, -2.0f, 0.5f};
  std::vector<float> y = {4.0f, 1.0f, -8.0f};
  axpby_ref(2.0f, x, 0.5f, y);
  CHECK(y[0] == 4.0f);
  CHECK(y[1] == -3.5f);
  CHECK(y[2] == -3.0f);
}

}  // namespace
}  // namespace gcmoe::kernels
