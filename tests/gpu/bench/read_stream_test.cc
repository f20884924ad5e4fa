#include <array>
#include <cstdio>
#include <random>
#include <vector>

#include "bench/common/floor_kernels.h"
#include "bench/common/read_stream_kernels.h"
#include "engine/backends/cuda/device_buffer.h"
#include "tests/support/catch.h"

namespace gcmoe::bench {
namespace {

using cuda::DeviceBuffer;

std::vector<std::uint8_t> random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> v(n);
  for (auto& b : v) {
    b = static_cast<std::uint8_t>(rng());
  }
  return v;
}

// Words of the stream's xor that differ from the CPU's (0 to 4).
int differing_words(std::array<std::uint32_t, 4> const& got,
                    std::array<std::uint32_t, 4> const& want) {
  int n = 0;
  for (std::size_t w = 0; w < 4; ++w) {
    n += got[w] != want[w] ? 1 : 0;
  }
  return n;
}

// Sizes with a grid-stride tail (not a multiple of blocks × threads × unroll vectors), and shapes
// whose unrolled loop never runs (one vector per thread or fewer).
TEST_CASE("Load streams xor every 16-byte vector of random data as the CPU does") {
  auto const [bytes, blocks, threads, unroll, streaming] =
      GENERATE(table<std::int64_t, int, int, int, bool>({{16, 1, 32, 4, true},
                                                         {4096 + 48, 3, 64, 8, false},
                                                         {(1 << 20) + 16 * 7, 132, 512, 4, true},
                                                         {(1 << 22) + 16 * 3, 264, 1024, 8, true},
                                                         {(1 << 22), 1056, 512, 4, false}}));
  std::vector<std::uint8_t> const host =
      random_bytes(static_cast<std::size_t>(bytes), 900 + static_cast<std::uint64_t>(blocks));
  auto src = DeviceBuffer<std::uint8_t>::allocate(host.size());
  auto out = DeviceBuffer<uint4>::allocate(static_cast<std::size_t>(blocks));
  REQUIRE(src.ok());
  REQUIRE(out.ok());
  REQUIRE(src->copy_from_host(host).ok());
  LoadStreamShape const shape{
      .blocks = blocks, .threads = threads, .unroll = unroll, .streaming = streaming};
  REQUIRE(launch_load_stream(src->data(), bytes, out->data(), shape, nullptr).to_string() == "OK");
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  auto const got = xor_of_partials(out->data(), blocks);
  REQUIRE(got.ok());
  int const wrong = differing_words(*got, host_xor16(host));
  std::printf("load stream bytes=%lld %dx%d unroll %d: %d of 4 xor words differ\n",
              static_cast<long long>(bytes), blocks, threads, unroll, wrong);
  CHECK(wrong == 0);
}

// Chunks fewer than the CTAs, fewer than the ring, and many laps of the ring.
TEST_CASE("Bulk streams xor every 16-byte vector of random data as the CPU does") {
  auto const [chunks, blocks, stages] = GENERATE(table<std::int64_t, int, int>(
      {{1, 4, 3}, {5, 2, 6}, {64, 3, 1}, {257, 132, 4}, {1024, 264, 3}}));
  std::int64_t const bytes = chunks * kBulkChunkBytes;
  std::vector<std::uint8_t> const host =
      random_bytes(static_cast<std::size_t>(bytes), 700 + static_cast<std::uint64_t>(chunks));
  auto src = DeviceBuffer<std::uint8_t>::allocate(host.size());
  auto out = DeviceBuffer<uint4>::allocate(static_cast<std::size_t>(blocks));
  REQUIRE(src.ok());
  REQUIRE(out.ok());
  REQUIRE(src->copy_from_host(host).ok());
  REQUIRE(
      launch_bulk_stream(src->data(), bytes, out->data(), blocks, stages, nullptr).to_string() ==
      "OK");
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  auto const got = xor_of_partials(out->data(), blocks);
  REQUIRE(got.ok());
  int const wrong = differing_words(*got, host_xor16(host));
  std::printf("bulk stream chunks=%lld %d CTAs x %d stages: %d of 4 xor words differ\n",
              static_cast<long long>(chunks), blocks, stages, wrong);
  CHECK(wrong == 0);
}

TEST_CASE("The SM copy kernel copies random data byte for byte") {
  std::int64_t const bytes = (std::int64_t{1} << 22) + 16 * 5;
  std::vector<std::uint8_t> const host = random_bytes(static_cast<std::size_t>(bytes), 31);
  auto src = DeviceBuffer<std::uint8_t>::allocate(host.size());
  auto dst = DeviceBuffer<std::uint8_t>::allocate(host.size());
  REQUIRE(src.ok());
  REQUIRE(dst.ok());
  REQUIRE(src->copy_from_host(host).ok());
  REQUIRE(launch_sm_copy(dst->data(), src->data(), bytes, nullptr).to_string() == "OK");
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  std::vector<std::uint8_t> back(host.size());
  REQUIRE(dst->copy_to_host(back).ok());
  std::size_t differing = 0;
  for (std::size_t i = 0; i < back.size(); ++i) {
    differing += back[i] != host[i] ? 1 : 0;
  }
  std::printf("sm copy bytes=%lld: %zu bytes differ\n", static_cast<long long>(bytes), differing);
  CHECK(differing == 0);
}

TEST_CASE("The streams refuse shapes they cannot run") {
  LoadStreamShape bad_unroll;
  bad_unroll.unroll = 3;
  CHECK(launch_load_stream(nullptr, 16, nullptr, bad_unroll, nullptr).code() ==
        StatusCode::kInvalidArgument);
  CHECK(launch_load_stream(nullptr, 17, nullptr, LoadStreamShape{}, nullptr).code() ==
        StatusCode::kInvalidArgument);
  CHECK(launch_bulk_stream(nullptr, kBulkChunkBytes + 16, nullptr, 1, 2, nullptr).code() ==
        StatusCode::kInvalidArgument);
  CHECK(launch_bulk_stream(nullptr, kBulkChunkBytes, nullptr, 1, 7, nullptr).code() ==
        StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gcmoe::bench
