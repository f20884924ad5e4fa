#include "tests/gpu/kernels/moe/expert_ffn_slots.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <optional>
#include <thread>
#include <utility>

#include "engine/backends/cuda/stream.h"
#include "engine/formats/bf16.h"
#include "kernels/moe/expert_rows_handshake.h"
#include "tests/support/catch.h"
#include "tests/support/device_upload.h"

namespace gcmoe::testing {

std::vector<std::vector<int>> route_top_k(int tokens, int experts, int top_k,
                                          bool expert_zero_always, std::mt19937_64& rng) {
  std::vector<std::vector<int>> tokens_of(static_cast<std::size_t>(experts));
  std::vector<int> order(static_cast<std::size_t>(experts));
  for (int t = 0; t < tokens; ++t) {
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    if (expert_zero_always) {
      std::iter_swap(order.begin(), std::find(order.begin(), order.end(), 0));
    }
    for (int k = 0; k < top_k; ++k) {
      tokens_of[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])].push_back(t);
    }
  }
  return tokens_of;
}

std::vector<float> random_tokens(int tokens, std::int64_t hidden, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  std::vector<float> x(static_cast<std::size_t>(tokens * hidden));
  for (auto& v : x) {
    v = uniform(rng);
  }
  return x;
}

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

DeviceExpertBatch upload_batch(ExpertSlots const& slots, formats::Fp8Activations const& xq,
                               std::int64_t hidden, std::int64_t inter) {
  std::int64_t const rows = slots.rows();
  DeviceExpertBatch b;
  b.x = upload(xq.codes);
  b.x_scales = upload(xq.scales);
  b.offsets = upload(slots.offsets);
  b.active = upload(slots.active);
  b.experts_with_rows = static_cast<int>(slots.active.size());
  b.num_active = upload(std::vector<int>{b.experts_with_rows});
  b.route = upload(slots.weight);
  auto h = cuda::DeviceBuffer<std::uint8_t>::allocate(rows * inter);
  auto h_scales = cuda::DeviceBuffer<float>::allocate(rows * (inter / 128));
  auto y = cuda::DeviceBuffer<std::uint16_t>::allocate(rows * hidden);
  REQUIRE((h.ok() && h_scales.ok() && y.ok()));
  REQUIRE(y->fill_bytes(0xff).ok());  // poison: bf16 NaN where nothing was written
  b.h = std::move(h).value();
  b.h_scales = std::move(h_scales).value();
  b.y = std::move(y).value();
  return b;
}

kernels::Fp8ExpertGemmArgs gate_up_args(DeviceExpertBatch const& batch, std::int64_t hidden,
                                        std::int64_t inter, int rows_per_expert_hint) {
  kernels::Fp8ExpertGemmArgs args;
  args.stage = kernels::ExpertGemmStage::kGateUp;
  args.tiles = static_cast<int>(inter / 8);
  args.chunks = static_cast<int>(hidden / 128);
  args.x = batch.x.data();
  args.x_scales = batch.x_scales.data();
  args.x_rows = static_cast<std::int64_t>(batch.x.size()) / hidden;
  args.expert_offsets = batch.offsets.data();
  args.active_experts = batch.active.data();
  args.num_active = batch.num_active.data();
  args.max_active = batch.experts_with_rows;
  args.rows_per_expert_hint = rows_per_expert_hint;
  args.h = batch.h.data();
  args.h_scales = batch.h_scales.data();
  return args;
}

kernels::Fp8ExpertGemmArgs down_args(kernels::Fp8ExpertGemmArgs const& gate_up,
                                     DeviceExpertBatch const& batch, std::int64_t hidden,
                                     std::int64_t inter) {
  kernels::Fp8ExpertGemmArgs down = gate_up;
  down.stage = kernels::ExpertGemmStage::kDown;
  down.tiles = static_cast<int>(hidden / 16);
  down.chunks = static_cast<int>(inter / 128);
  down.x = batch.h.data();
  down.x_scales = batch.h_scales.data();
  down.x_rows = static_cast<std::int64_t>(batch.h.size()) / inter;
  down.y = batch.y.data();
  down.ready_blocks = nullptr;
  return down;
}

namespace {

// Calls visit(e, begin, count, xs, ws) for every expert e with rows: its first row, its row count,
// its rows' tokens [count, H] and routing weights [count].
template <typename Visit>
void for_each_expert_rows(ExpertSlots const& slots,
                          std::span<kernels::DenseExpertWeights const> experts, Visit&& visit) {
  for (std::size_t e = 0; e < experts.size(); ++e) {
    std::int64_t const h = experts[e].hidden;
    std::int64_t const begin = slots.offsets[e];
    std::int64_t const count = slots.offsets[e + 1] - begin;
    if (count == 0) {
      continue;
    }
    visit(e, begin, count, std::span<float const>(slots.x.data() + begin * h, count * h),
          std::span<float const>(slots.weight.data() + begin, count));
  }
}

}  // namespace

std::vector<float> expert_ffn_reference(ExpertSlots const& slots,
                                        std::span<kernels::DenseExpertWeights const> experts,
                                        kernels::ExpertFfnOptions const& options) {
  std::vector<float> ref(slots.x.size());
  for_each_expert_rows(
      slots, experts,
      [&](std::size_t e, std::int64_t begin, std::int64_t count, std::span<float const> xs,
          std::span<float const> ws) {
        std::int64_t const h = experts[e].hidden;
        REQUIRE(kernels::expert_ffn_ref(experts[e], options, xs, ws,
                                        std::span<float>(ref.data() + begin * h, count * h))
                    .ok());
      });
  return ref;
}

StagedReference staged_reference(ExpertSlots const& slots,
                                 std::span<kernels::DenseExpertWeights const> experts,
                                 kernels::ExpertFfnOptions const& options,
                                 DeviceExpertBatch const& batch, double tolerance) {
  REQUIRE(!experts.empty());
  std::int64_t const h = experts[0].hidden;
  std::int64_t const inter = experts[0].intermediate;
  std::int64_t const rows = slots.rows();
  // The kernel's h as its down GEMM reads it: [rows, I] codes with a scale per 128.
  std::int64_t const group = formats::kActivationGroup;
  formats::Fp8Activations kernel_q{.tokens = rows,
                                   .hidden = inter,
                                   .group = group,
                                   .codes = std::vector<std::uint8_t>(rows * inter),
                                   .scales = std::vector<float>(rows * inter / group)};
  REQUIRE(batch.h.copy_to_host(kernel_q.codes).ok());
  REQUIRE(batch.h_scales.copy_to_host(kernel_q.scales).ok());
  // Every row's exact h; the rows are whole groups, so one check covers them all.
  std::vector<float> exact(kernel_q.codes.size());
  for_each_expert_rows(slots, experts,
                       [&](std::size_t e, std::int64_t begin, std::int64_t count,
                           std::span<float const> xs, std::span<float const> ws) {
                         REQUIRE(kernels::expert_ffn_hidden_ref(
                                     experts[e], options, xs, ws,
                                     std::span<float>(exact.data() + begin * inter, count * inter))
                                     .ok());
                       });
  StagedReference staged;
  staged.h = check_requantization(options.activation_recipe, exact, kernel_q.codes, kernel_q.scales,
                                  kernel_q.group, tolerance);
  std::vector<float> kernel_h(exact.size());
  REQUIRE(formats::dequantize_activations(kernel_q, kernel_h).ok());
  staged.y_from_kernel_h.resize(slots.x.size());
  for_each_expert_rows(
      slots, experts,
      [&](std::size_t e, std::int64_t begin, std::int64_t count, std::span<float const>,
          std::span<float const>) {
        REQUIRE(kernels::expert_ffn_down_ref(
                    experts[e],
                    std::span<float const>(kernel_h.data() + begin * inter, count * inter),
                    std::span<float>(staged.y_from_kernel_h.data() + begin * h, count * h))
                    .ok());
      });
  return staged;
}

ReadyCounters make_ready_counters(std::int64_t rows) {
  ReadyCounters c;
  c.blocks = static_cast<int>(rows / ReadyCounters::kBlockRows) + 1;
  c.ready = upload(std::vector<int>(static_cast<std::size_t>(c.blocks), 0));
  c.error = upload(std::vector<unsigned>{0u});
  return c;
}

void ReadyCounters::attach(kernels::Fp8ExpertGemmArgs& args, int epoch,
                           std::int64_t timeout_ns) const {
  args.ready_blocks = ready.data();
  args.ready_block_rows = kBlockRows;
  args.ready_epoch = epoch;
  args.error = error.data();
  args.ready_timeout_ns = timeout_ns;
}

unsigned ReadyCounters::error_flag() const {
  std::vector<unsigned> flag(1);
  REQUIRE(error.copy_to_host(flag).ok());
  return flag[0];
}

std::vector<float> download_y(DeviceExpertBatch const& batch, std::int64_t rows,
                              std::int64_t hidden) {
  std::vector<std::uint16_t> bits(static_cast<std::size_t>(rows * hidden));
  REQUIRE(batch.y.copy_to_host(bits).ok());
  std::vector<float> y(bits.size());
  std::transform(bits.begin(), bits.end(), y.begin(), formats::decode_bf16);
  return y;
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

void run_ffn_pairs(std::function<Status(kernels::Fp8ExpertGemmArgs const&)> const& launch,
                   kernels::Fp8ExpertGemmArgs gate_up, kernels::Fp8ExpertGemmArgs down,
                   DeviceExpertBatch const& batch, std::int64_t rows, PairOrder order,
                   cudaStream_t stream, std::function<void()> const& after_l1) {
  bool const by_rows = order != PairOrder::kStream;
  std::optional<kernels::ExpertRowsHandshake> handshake;
  if (by_rows) {
    auto created = kernels::ExpertRowsHandshake::create(static_cast<int>(rows), stream);
    REQUIRE(created.ok());
    handshake.emplace(std::move(*created));
    REQUIRE(handshake->apply(gate_up, down, rows).ok());
  }
  if (order == PairOrder::kByRowsNeverReleased) {
    gate_up.rows_done = nullptr;
    down.ready_timeout_ns = 1'000'000;
  }
  for (int pair = 0; pair < (order == PairOrder::kByRows ? 3 : 1); ++pair) {
    if (by_rows) {
      REQUIRE(cudaMemsetAsync(batch.h.data(), 0xff, batch.h.size(), stream) == cudaSuccess);
    }
    REQUIRE(launch(gate_up).to_string() == "OK");
    if (after_l1) {
      after_l1();
    }
    REQUIRE(launch(down).to_string() == "OK");  // h: L1's, in stream order or by rows
    if (by_rows) {
      REQUIRE(handshake->finish(stream).ok());
    }
  }
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  if (order == PairOrder::kByRows) {
    CHECK(handshake->check(stream).to_string() == "OK");
  } else if (order == PairOrder::kByRowsNeverReleased) {
    Status const timed_out = handshake->check(stream);
    std::printf("expert ffn: L1 never releases its rows -> %s\n", timed_out.to_string().c_str());
    CHECK(timed_out.code() == StatusCode::kDeadlineExceeded);
  }
}

}  // namespace gcmoe::testing
