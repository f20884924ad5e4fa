#pragma once
// GPU tests: a host vector copied into a new device buffer (at least one element, so empty
// inputs still give a valid pointer); a failure fails the test.

#include <algorithm>
#include <utility>
#include <vector>

#include "engine/backends/cuda/device_buffer.h"
#include "tests/support/catch.h"

namespace gcmoe::testing {

template <typename T>
cuda::DeviceBuffer<T> upload(std::vector<T> const& host) {
  auto buffer = cuda::DeviceBuffer<T>::allocate(std::max<std::size_t>(host.size(), 1));
  REQUIRE(buffer.ok());
  if (!host.empty()) {
    REQUIRE(buffer->copy_from_host(host).ok());
  }
  return std::move(buffer).value();
}

}  // namespace gcmoe::testing
