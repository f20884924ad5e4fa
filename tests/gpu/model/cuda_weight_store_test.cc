// The device weight store: writes larger than a staging slot, from several workers, land intact;
// tiny checkpoints of every family loaded to the GPU hold the same bytes as a host load.
#include "engine/model/cuda_weight_store.h"

#include <cuda_runtime.h>

#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "engine/model/weight_loader.h"
#include "engine/model/weights/model_weight_spec.h"
#include "tests/support/catch.h"
#include "tests/unit/tiny/tiny_test_support.h"

namespace gcmoe::model {
namespace {

std::vector<std::byte> device_copy(WeightStore const& store) {
  std::vector<std::byte> host(static_cast<std::size_t>(store.size()));
  REQUIRE(cudaMemcpy(host.data(), store.data(), host.size(), cudaMemcpyDeviceToHost) ==
          cudaSuccess);
  return host;
}

TEST_CASE("writes bigger than a staging slot, from several workers, arrive intact") {
  constexpr int kWorkers = 3;
  constexpr std::size_t kPart = (5U << 20) + 123;  // 5 MiB + a tail: several 1 MiB slots
  CudaWeightStore store(0, 4LL << 20);             // 4 MiB over 3 workers × 2 slots -> 1 MiB slots
  REQUIRE(store.allocate(kWorkers * kPart, kWorkers).ok());
  std::vector<std::byte> source(kWorkers * kPart);
  std::mt19937 random(5);
  for (std::byte& b : source) {
    b = static_cast<std::byte>(random());
  }
  // Catch2's macros are not thread-safe: the workers keep their statuses, checked after the join.
  std::vector<Status> written(kWorkers);
  {
    std::vector<std::jthread> threads;
    for (int w = 0; w < kWorkers; ++w) {
      threads.emplace_back([&, w] {
        std::size_t const at = static_cast<std::size_t>(w) * kPart;
        written[static_cast<std::size_t>(w)] =
            store.write(w, static_cast<std::int64_t>(at),
                        std::span<std::byte const>(source).subspan(at, kPart));
      });
    }
  }
  for (Status const& s : written) {
    CHECK(s.to_string() == "OK");
  }
  REQUIRE(store.flush().ok());
  std::vector<std::byte> const back = device_copy(store);
  CHECK(std::memcmp(back.data(), source.data(), source.size()) == 0);
}

TEST_CASE("tiny checkpoints load to the GPU with the host load's bytes") {
  for (config::ModelFamily const family :
       {config::ModelFamily::kGlmMoeDsa, config::ModelFamily::kDeepseekV4,
        config::ModelFamily::kDeepseekV41}) {
    INFO(config::model_family_name(family));
    std::filesystem::path const dir = tiny::testing::written_model(family).dir->path();
    auto const model = describe_model(dir);
    REQUIRE(model.ok());
    auto const checkpoint = checkpoint::Checkpoint::open(dir);
    REQUIRE(checkpoint.ok());
    auto const transform = default_expert_transform(model->config);
    LoadOptions options;
    options.selection = {2, 1, true, nullptr, transform.get()};
    options.workers = 4;
    options.copy_piece_bytes = 100000;  // several pieces per large tensor
    auto const host =
        load_weights(*checkpoint, model->spec, options, std::make_unique<HostWeightStore>());
    auto const device = load_weights(*checkpoint, model->spec, options,
                                     std::make_unique<CudaWeightStore>(0, 8LL << 20));
    INFO(device.status().to_string());
    REQUIRE(host.ok());
    REQUIRE(device.ok());
    CHECK(device->store().location() == WeightLocation::kDevice);
    std::vector<std::byte> const back = device_copy(device->store());
    std::size_t compared = 0;
    for_each_tensor(model->spec, true, [&](TensorSpec const& tensor) {
      auto const placement = host->find(tensor.name);
      if (placement.ok()) {
        auto const bytes = host->host_bytes(*placement);
        REQUIRE(bytes.ok());
        CHECK(std::memcmp(back.data() + placement->offset, bytes->data(), bytes->size()) == 0);
        ++compared;
      }
    });
    for (LocalExpertBlock const& block : host->expert_blocks()) {
      for (WeightPlacement const& packed : block.packed) {
        auto const bytes = host->host_bytes(packed);
        REQUIRE(bytes.ok());
        CHECK(std::memcmp(back.data() + packed.offset, bytes->data(), bytes->size()) == 0);
        ++compared;
      }
    }
    CHECK(compared > 100);
  }
}

}  // namespace
}  // namespace gcmoe::model
