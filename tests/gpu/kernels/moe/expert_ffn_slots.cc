#include "tests/gpu/kernels/moe/expert_ffn_slots.h"

#include <chrono>
#include <thread>

#include "engine/backends/cuda/stream.h"
#include "tests/support/catch.h"

namespace gcmoe::testing {

ExpertSlots group_by_expert(std::vector<std::vector<int>> const& tokens_of,
                            std::vector<float> const& x, std::int64_t hidden,
                            std::mt19937_64& rng) {
  std::uniform_real_distribution<float> weight_dist(0.05f, 1.0f);
  ExpertSlots s;
  for (std::size_t e = 0; e < tokens_of.size(); ++e) {
    for (int const t : tokens_of[e]) {
      s.x.insert(s.x.end(), x.begin() + t * hidden, x.begin() + (t + 1) * hidden);
      s.weight.push_back(weight_dist(rng));
    }
    s.offsets.push_back(static_cast<int>(s.weight.size()));
    if (!tokens_of[e].empty()) {
      s.active.push_back(static_cast<int>(e));
    }
  }
  return s;
}

std::vector<float> expert_ffn_reference(ExpertSlots const& slots,
                                        std::span<kernels::DenseExpertWeights const> experts,
                                        kernels::ExpertFfnOptions const& options) {
  std::vector<float> ref(slots.x.size());
  for (std::size_t e = 0; e < experts.size(); ++e) {
    std::int64_t const h = experts[e].hidden;
    std::int64_t const begin = slots.offsets[e];
    std::int64_t const count = slots.offsets[e + 1] - begin;
    if (count == 0) {
      continue;
    }
    std::span<float const> const xs(slots.x.data() + begin * h, count * h);
    std::span<float const> const ws(slots.weight.data() + begin, count);
    REQUIRE(kernels::expert_ffn_ref(experts[e], options, xs, ws,
                                    std::span<float>(ref.data() + begin * h, count * h))
                .ok());
  }
  return ref;
}

void release_rows_late(cudaStream_t waiting, int* ready, int blocks, int epoch) {
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(cudaStreamQuery(waiting) == cudaErrorNotReady);  // the kernel waits for the rows
  auto setter = cuda::Stream::create();
  REQUIRE(setter.ok());
  std::vector<int> const epochs(static_cast<std::size_t>(blocks), epoch);
  REQUIRE(cudaMemcpyAsync(ready, epochs.data(), epochs.size() * sizeof(int), cudaMemcpyHostToDevice,
                          setter->get()) == cudaSuccess);
  REQUIRE(setter->synchronize().ok());
}

}  // namespace gcmoe::testing
