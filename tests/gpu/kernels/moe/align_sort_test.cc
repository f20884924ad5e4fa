#include "kernels/moe/align_sort.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "engine/backends/cuda/device_buffer.h"
#include "kernels/moe/align_sort_buffers.h"
#include "kernels/moe/align_sort_ref.h"
#include "tests/support/catch.h"

namespace gcmoe::kernels {
namespace {

using cuda::DeviceBuffer;
using Ids = std::vector<std::int32_t>;

enum class Routing {
  kUniform,      // any expert, repeats allowed inside a token
  kDistinct,     // k distinct experts per token (what a router produces)
  kSkewed,       // every pair on one expert
  kFewExperts,   // a handful of experts, the rest empty
  kWithInvalid,  // uniform with ~10% ids outside [0, E) (other ranks' experts)
};

char const* routing_name(Routing routing) {
  switch (routing) {
    case Routing::kUniform:
      return "uniform";
    case Routing::kDistinct:
      return "distinct";
    case Routing::kSkewed:
      return "skewed";
    case Routing::kFewExperts:
      return "few";
    case Routing::kWithInvalid:
      return "invalid";
  }
  return "?";
}

enum class Impl { kAuto, kOneBlock, kMultiBlock, kSingleBlock };

char const* impl_name(Impl impl) {
  switch (impl) {
    case Impl::kAuto:
      return "auto";
    case Impl::kOneBlock:
      return "one_block";
    case Impl::kMultiBlock:
      return "multi_block";
    case Impl::kSingleBlock:
      return "single_block";
  }
  return "?";
}

Ids make_ids(AlignSortShape const& shape, Routing routing, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::int32_t const experts = shape.num_experts;
  std::uniform_int_distribution<std::int32_t> any(0, experts - 1);
  Ids ids(static_cast<std::size_t>(shape.num_pairs()));
  switch (routing) {
    case Routing::kUniform:
      for (auto& id : ids) {
        id = any(rng);
      }
      break;
    case Routing::kDistinct: {
      std::vector<std::int32_t> pool(static_cast<std::size_t>(experts));
      for (std::int32_t e = 0; e < experts; ++e) {
        pool[static_cast<std::size_t>(e)] = e;
      }
      for (std::int32_t t = 0; t < shape.num_tokens; ++t) {
        for (std::int32_t j = 0; j < shape.top_k; ++j) {
          // Partial Fisher-Yates; repeats only when top_k > experts.
          auto const pick = static_cast<std::size_t>(
              j % experts +
              static_cast<std::int32_t>(rng() % static_cast<std::uint64_t>(experts - j % experts)));
          std::swap(pool[static_cast<std::size_t>(j % experts)], pool[pick]);
          ids[static_cast<std::size_t>(t) * static_cast<std::size_t>(shape.top_k) +
              static_cast<std::size_t>(j)] = pool[static_cast<std::size_t>(j % experts)];
        }
      }
      break;
    }
    case Routing::kSkewed: {
      std::int32_t const e = any(rng);
      std::fill(ids.begin(), ids.end(), e);
      break;
    }
    case Routing::kFewExperts: {
      std::int32_t const few = std::min<std::int32_t>(experts, 3);
      std::vector<std::int32_t> chosen(static_cast<std::size_t>(few));
      for (auto& c : chosen) {
        c = any(rng);
      }
      for (auto& id : ids) {
        id = chosen[rng() % chosen.size()];
      }
      break;
    }
    case Routing::kWithInvalid:
      for (auto& id : ids) {
        std::uint64_t const r = rng() % 20;
        id = r == 0 ? -1 - static_cast<std::int32_t>(rng() % 4)
                    : (r == 1 ? experts + static_cast<std::int32_t>(rng() % 1000) : any(rng));
      }
      break;
  }
  return ids;
}

AlignSortBuffers allocate_outputs(AlignSortShape const& shape) {
  auto out = AlignSortBuffers::allocate(shape);
  REQUIRE(out.ok());
  return std::move(out).value();
}

AlignSortResult read_back(AlignSortBuffers const& out) {
  auto r = out.read_back();
  REQUIRE(r.ok());
  return std::move(r).value();
}

class Workspace {
 public:
  Workspace() {
    bytes_ = align_sort_workspace_bytes(kAlignSortMaxExperts);
    auto buffer = DeviceBuffer<unsigned char>::allocate(bytes_);
    REQUIRE(buffer.ok());
    buffer_ = std::move(*buffer);
    REQUIRE(align_sort_init_workspace(buffer_.data(), bytes_, nullptr).ok());
  }
  void* data() const { return buffer_.data(); }
  std::size_t bytes() const { return bytes_; }

 private:
  DeviceBuffer<unsigned char> buffer_;
  std::size_t bytes_ = 0;
};

Status launch(Impl impl, std::int32_t const* ids, AlignSortShape const& shape,
              AlignSortOutputs const& out, Workspace const& ws, cudaStream_t stream) {
  switch (impl) {
    case Impl::kAuto:
      return align_sort(ids, shape, out, ws.data(), ws.bytes(), stream, AlignSortPath::kAuto);
    case Impl::kOneBlock:
      return align_sort(ids, shape, out, ws.data(), ws.bytes(), stream, AlignSortPath::kOneBlock);
    case Impl::kMultiBlock:
      // In a launch chain (the GC-MoE graph's form): the placement pass launched while the count
      // pass runs, waiting for it at its start.
      return align_sort(ids, shape, out, ws.data(), ws.bytes(), stream, AlignSortPath::kMultiBlock,
                        /*chained=*/true);
    case Impl::kSingleBlock:
      return align_sort_single_block(ids, shape, out, stream);
  }
  return internal_error("unknown implementation");
}

// Runs every implementation on one input; returns the total mismatch count and prints each.
std::size_t check_case(AlignSortShape const& shape, Routing routing, std::uint64_t seed,
                       Workspace const& ws) {
  Ids const ids = make_ids(shape, routing, seed);
  auto const ref = align_sort_ref(ids, shape);
  REQUIRE(ref.ok());
  auto d_ids = DeviceBuffer<std::int32_t>::allocate(ids.size());
  REQUIRE(d_ids.ok());
  if (!ids.empty()) {
    REQUIRE(d_ids->copy_from_host(ids).ok());
  }
  AlignSortBuffers out = allocate_outputs(shape);
  std::size_t all = 0;
  for (Impl const impl : {Impl::kAuto, Impl::kOneBlock, Impl::kMultiBlock, Impl::kSingleBlock}) {
    REQUIRE(out.poison().ok());
    Status const launched = launch(impl, d_ids->data(), shape, out.view(), ws, nullptr);
    REQUIRE(launched.to_string() == "OK");
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    std::size_t const m = count_mismatches(read_back(out), *ref);
    if (m != 0 || shape.num_pairs() >= 65536) {
      std::printf(
          "align_sort %s T=%d k=%d E=%d B=%d routing=%s seed=%llu total=%d mismatches=%zu\n",
          impl_name(impl), shape.num_tokens, shape.top_k, shape.num_experts, shape.block_size,
          routing_name(routing), static_cast<unsigned long long>(seed), ref->total_padded, m);
    }
    all += m;
  }
  return all;
}

TEST_CASE("align & sort on the GPU equals the CPU reference: edge shapes") {
  Workspace const ws;
  struct Case {
    AlignSortShape shape;
    Routing routing;
  };
  std::vector<Case> const cases = {
      {{.num_tokens = 0, .top_k = 8, .num_experts = 256, .block_size = 64}, Routing::kUniform},
      {{.num_tokens = 1, .top_k = 6, .num_experts = 256, .block_size = 16}, Routing::kDistinct},
      {{.num_tokens = 1, .top_k = 8, .num_experts = 1024, .block_size = 256}, Routing::kDistinct},
      {{.num_tokens = 1, .top_k = 1, .num_experts = 1, .block_size = 16}, Routing::kUniform},
      {{.num_tokens = 3000, .top_k = 2, .num_experts = 1, .block_size = 1}, Routing::kUniform},
      {{.num_tokens = 777, .top_k = 3, .num_experts = 5, .block_size = 1024}, Routing::kUniform},
      {{.num_tokens = 65536, .top_k = 8, .num_experts = 256, .block_size = 64}, Routing::kDistinct},
      {{.num_tokens = 65536, .top_k = 6, .num_experts = 384, .block_size = 128},
       Routing::kDistinct},
      {{.num_tokens = 65536, .top_k = 6, .num_experts = 1024, .block_size = 16},
       Routing::kWithInvalid},
      {{.num_tokens = 65536, .top_k = 8, .num_experts = 256, .block_size = 256}, Routing::kSkewed},
      {{.num_tokens = 65536, .top_k = 8, .num_experts = 1024, .block_size = 32},
       Routing::kFewExperts},
      {{.num_tokens = 4096, .top_k = 8, .num_experts = 256, .block_size = 64}, Routing::kSkewed},
  };
  std::size_t total = 0;
  std::uint64_t seed = 4000;
  for (Case const& c : cases) {
    total += check_case(c.shape, c.routing, ++seed, ws);
  }
  std::printf("align_sort edge shapes: %zu cases x 4 implementations, mismatches=%zu\n",
              cases.size(), total);
  CHECK(total == 0);
}

TEST_CASE("align & sort on the GPU equals the CPU reference: random shapes") {
  Workspace const ws;
  std::mt19937_64 rng(20261129);
  std::size_t total = 0;
  int constexpr kCases = 150;
  for (int i = 0; i < kCases; ++i) {
    double const log_t = std::uniform_real_distribution<double>(0.0, 14.3)(rng);
    AlignSortShape shape;
    shape.num_tokens = std::max(1, static_cast<int>(std::exp2(log_t)));
    shape.top_k = std::uniform_int_distribution<int>(1, 10)(rng);
    shape.num_experts = (rng() % 3 == 0) ? std::uniform_int_distribution<int>(1, 1024)(rng)
                                         : std::array<int, 4>{64, 256, 384, 1024}[rng() % 4];
    shape.block_size = (rng() % 2 == 0) ? std::uniform_int_distribution<int>(16, 256)(rng)
                                        : std::array<int, 5>{16, 32, 64, 128, 256}[rng() % 5];
    auto const routing = static_cast<Routing>(rng() % 5);
    total += check_case(shape, routing, 9000 + static_cast<std::uint64_t>(i), ws);
  }
  std::printf("align_sort random shapes: %d cases x 4 implementations, mismatches=%zu\n", kCases,
              total);
  CHECK(total == 0);
}

// Captured once, replayed on new inputs written into the same buffer: the workspace ticket resets
// itself and nothing depends on the host.
TEST_CASE("align & sort replays from a CUDA graph") {
  Workspace const ws;
  std::size_t total = 0;
  for (AlignSortShape const shape :
       {AlignSortShape{.num_tokens = 4096, .top_k = 8, .num_experts = 256, .block_size = 64},
        AlignSortShape{.num_tokens = 100, .top_k = 6, .num_experts = 384, .block_size = 16}}) {
    auto d_ids = DeviceBuffer<std::int32_t>::allocate(static_cast<std::size_t>(shape.num_pairs()));
    REQUIRE(d_ids.ok());
    AlignSortBuffers out = allocate_outputs(shape);
    cudaStream_t stream = nullptr;
    REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
    cudaGraph_t graph = nullptr;
    REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
    Status const multi = launch(Impl::kMultiBlock, d_ids->data(), shape, out.view(), ws, stream);
    REQUIRE(cudaStreamEndCapture(stream, &graph) == cudaSuccess);
    REQUIRE(multi.to_string() == "OK");
    cudaGraphExec_t exec = nullptr;
    REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
    for (std::uint64_t replay = 0; replay < 3; ++replay) {
      Ids const ids = make_ids(shape, replay == 1 ? Routing::kSkewed : Routing::kDistinct,
                               700 + replay + static_cast<std::uint64_t>(shape.num_tokens));
      REQUIRE(d_ids->copy_from_host(ids).ok());
      REQUIRE(out.poison().ok());
      REQUIRE(cudaGraphLaunch(exec, stream) == cudaSuccess);
      REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
      auto const ref = align_sort_ref(ids, shape);
      REQUIRE(ref.ok());
      std::size_t const m = count_mismatches(read_back(out), *ref);
      std::printf("align_sort graph replay %llu T=%d k=%d E=%d B=%d mismatches=%zu\n",
                  static_cast<unsigned long long>(replay), shape.num_tokens, shape.top_k,
                  shape.num_experts, shape.block_size, m);
      total += m;
    }
    REQUIRE(cudaGraphExecDestroy(exec) == cudaSuccess);
    REQUIRE(cudaGraphDestroy(graph) == cudaSuccess);
    REQUIRE(cudaStreamDestroy(stream) == cudaSuccess);
  }
  CHECK(total == 0);
}

TEST_CASE("align & sort rejects bad arguments") {
  Workspace const ws;
  AlignSortShape shape{.num_tokens = 8192, .top_k = 8, .num_experts = 256, .block_size = 64};
  AlignSortBuffers out = allocate_outputs(shape);
  auto d_ids = DeviceBuffer<std::int32_t>::allocate(static_cast<std::size_t>(shape.num_pairs()));
  REQUIRE(d_ids.ok());
  CHECK(align_sort(d_ids->data(), shape, out.view(), ws.data(), 64, nullptr,
                   AlignSortPath::kMultiBlock)
            .code() == StatusCode::kInvalidArgument);
  CHECK(
      align_sort(d_ids->data(), shape, AlignSortOutputs{}, ws.data(), ws.bytes(), nullptr).code() ==
      StatusCode::kInvalidArgument);
  shape.num_experts = 1025;
  CHECK(align_sort(d_ids->data(), shape, out.view(), ws.data(), ws.bytes(), nullptr).code() ==
        StatusCode::kInvalidArgument);
  CHECK(align_sort_single_block(d_ids->data(), shape, out.view(), nullptr).code() ==
        StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gcmoe::kernels
