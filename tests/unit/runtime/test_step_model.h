#pragma once
// TEST DOUBLE — not a model. A deterministic StepModel for testing the step loop, the worker and
// the server without a model family: it stores each position's input token in its KV blocks (so
// wrong block tables or skipped prefill chunks change the output), and a sampled row's logits are
// a hash of every token of its sequence so far, read back from those blocks. Each step joins one
// all_reduce over the Communicator, as a MoE layer would, and checks that every rank joined with
// the same step number.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>

#include "engine/runtime/communicator.h"
#include "engine/runtime/step_model.h"

namespace gcmoe::testing {

struct TestStepModelOptions {
  std::int32_t vocab_size = 64;
  std::int32_t max_context = 512;
  std::vector<std::uint32_t> eos_token_ids = {63};
  std::int32_t kv_blocks = 256;
  std::int32_t kv_block_size = 4;
  std::chrono::microseconds step_delay{0};  // sleep per step (to catch requests mid-stream)
  std::int64_t fail_at_step = -1;           // step() returns INTERNAL at this step number
};

class TestStepModel final : public runtime::StepModel {
 public:
  TestStepModel(TestStepModelOptions const& options, runtime::Communicator& comm);

  runtime::StepModelInfo const& info() const override { return info_; }
  Status step(runtime::StepBatch const& batch, std::vector<float>& logits) override;

  std::int64_t steps() const { return steps_.load(); }
  std::int64_t empty_steps() const { return empty_steps_.load(); }

  // The logits row of a sequence whose tokens so far are `tokens` (what step() computes from the
  // KV for the row's last position): the reference for tests.
  static std::vector<float> reference_logits(std::span<std::int32_t const> tokens,
                                             std::int32_t vocab_size);

 private:
  TestStepModelOptions options_;
  runtime::Communicator& comm_;
  runtime::StepModelInfo info_;
  std::vector<std::int32_t> kv_;  // kv_blocks x kv_block_size input token ids
  std::atomic<std::int64_t> steps_{0};
  std::atomic<std::int64_t> empty_steps_{0};
};

}  // namespace gcmoe::testing
