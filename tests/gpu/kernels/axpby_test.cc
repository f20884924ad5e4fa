#include "kernels/elementwise/axpby.h"

#include <cmath>
#include <cstdio>
#include <vector>

#include "engine/backends/cuda/device_buffer.h"
#include "kernels/elementwise/axpby_ref.h"
#include "tests/support/catch.h"
#include "tests/support/error_norm.h"
#include "tests/support/random.h"

namespace gcmoe::kernels {
namespace {

using cuda::DeviceBuffer;

// Sizes cover the empty case, a scalar tail, the float4 path, and a grid-stride loop (> 65535
// blocks' worth of work). `offset` misaligns the pointers to force the scalar path.
TEST_CASE("axpby on the GPU matches the CPU reference on random data") {
  auto const [n, offset] = GENERATE(table<std::int64_t, std::int64_t>(
      {{0, 0}, {1, 0}, {7, 0}, {4096, 0}, {4099, 1}, {1 << 20, 0}, {(1 << 25) + 3, 0}}));
  std::uint64_t const seed =
      1000 + static_cast<std::uint64_t>(n) + static_cast<std::uint64_t>(offset);
  std::vector<float> const x = testing::random_floats(static_cast<std::size_t>(n), seed);
  std::vector<float> y = testing::random_floats(static_cast<std::size_t>(n), seed + 1);

  auto dx = DeviceBuffer<float>::allocate(static_cast<std::size_t>(n + offset));
  auto dy = DeviceBuffer<float>::allocate(static_cast<std::size_t>(n + offset));
  REQUIRE(dx.ok());
  REQUIRE(dy.ok());
  if (n > 0) {
    REQUIRE(cudaMemcpy(dx->data() + offset, x.data(), x.size() * sizeof(float),
                       cudaMemcpyHostToDevice) == cudaSuccess);
    REQUIRE(cudaMemcpy(dy->data() + offset, y.data(), y.size() * sizeof(float),
                       cudaMemcpyHostToDevice) == cudaSuccess);
  }
  float const a = 1.75f;
  float const b = -0.5f;
  Status const launched = axpby(a, dx->data() + offset, b, dy->data() + offset, n, nullptr);
  REQUIRE(launched.to_string() == "OK");
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);

  std::vector<float> out(static_cast<std::size_t>(n));
  if (n > 0) {
    REQUIRE(cudaMemcpy(out.data(), dy->data() + offset, out.size() * sizeof(float),
                       cudaMemcpyDeviceToHost) == cudaSuccess);
  }
  axpby_ref(a, x, b, y);
  double const error = testing::relative_l2_error(out, y);
  std::printf("axpby n=%lld offset=%lld seed=%llu rel_l2_error=%.3e\n", static_cast<long long>(n),
              static_cast<long long>(offset), static_cast<unsigned long long>(seed), error);
  // Same fp32 expression on both sides; FMA contraction allows one rounding of difference.
  CHECK(error < 1e-6);
}

TEST_CASE("axpby rejects a negative length") {
  CHECK(axpby(1.0f, nullptr, 1.0f, nullptr, -1, nullptr).code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gcmoe::kernels
