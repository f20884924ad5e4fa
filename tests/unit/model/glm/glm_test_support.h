#pragma once
// Shared pieces of the GLM step-model tests: the golden fixture (tests/fixtures/glm/tiny, written
// by scripts/fixtures/make_glm_goldens.py), loading the model for a rank, and a small driver that
// owns sequences' block tables and feeds StepBatches the way the scheduler would.
//
// Catch2's assertion and INFO macros are not thread-safe (v2, and v3 by default: they update the
// run's counters and message stack without a lock). Code running on a second thread — the other
// rank of a ThreadGroup — must use only the try_ functions here, which report through Status, and
// leave every REQUIRE/CHECK to the test's own thread after join(). generate() and add_sequence()
// check that they run on the test's thread and abort otherwise, so a misuse fails every time.

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <vector>

#include "engine/common/status.h"
#include "engine/runtime/communicator.h"
#include "engine/runtime/step_model.h"

namespace gcmoe::testing::glm {

inline constexpr std::int32_t kKvBlocks = 64;
inline constexpr std::int32_t kBlockSize = 4;  // small, so sequences span many blocks

std::filesystem::path fixture_dir();

struct Golden {
  std::vector<std::uint32_t> prompt;
  std::vector<std::uint32_t> greedy;
  std::map<std::int32_t, std::vector<float>> logits;  // by step (0 = prefill's last position)
};
std::vector<Golden> load_goldens();

// The fixture model for `comm`'s rank; fails the test on error.
std::unique_ptr<runtime::StepModel> load_fixture_model(runtime::Communicator& comm,
                                                       std::int32_t max_batch_tokens = 256);

// Owns sequences and their (deliberately scattered) KV blocks; builds each step's StepBatch.
class Driver {
 public:
  Driver(runtime::StepModel& model, std::int32_t kv_blocks = kKvBlocks,
         std::int32_t block_size = kBlockSize, std::uint64_t seed = 1);

  // A sequence of up to `max_positions` positions; returns its handle (RESOURCE_EXHAUSTED when
  // the free blocks do not cover it). add_sequence fails the test instead; test thread only.
  StatusOr<std::int32_t> try_add_sequence(std::int32_t max_positions);
  std::int32_t add_sequence(std::int32_t max_positions);
  std::int32_t length(std::int32_t seq) const { return lengths_[static_cast<std::size_t>(seq)]; }

  struct Work {
    std::int32_t seq = 0;
    std::vector<std::uint32_t> tokens;
    bool samples = true;
  };
  // One step over `work` (in order); advances each sequence by its tokens. `logits` gets one row
  // per sampling work item.
  Status step(std::vector<Work> const& work, std::vector<float>& logits);

  runtime::StepModel& model() { return model_; }

 private:
  runtime::StepModel& model_;
  std::int32_t block_size_;
  std::vector<std::int32_t> free_blocks_;
  std::vector<std::vector<std::int32_t>> tables_;
  std::vector<std::int32_t> lengths_;
};

struct Generation {
  std::vector<std::uint32_t> tokens;
  std::map<std::int32_t, std::vector<float>> logits;  // every step
};

// Prefill `prompt` in chunks of `chunk` tokens (0: all at once), then greedy-decode to `steps`
// tokens in all into `out`; returns the first error. Safe on any thread.
Status try_generate(Driver& driver, std::vector<std::uint32_t> const& prompt, std::int32_t steps,
                    Generation& out, std::int32_t chunk = 0);
// try_generate that fails the test on error; test thread only.
Generation generate(Driver& driver, std::vector<std::uint32_t> const& prompt, std::int32_t steps,
                    std::int32_t chunk = 0);

std::uint32_t argmax(std::span<float const> logits);
double max_abs_error(std::span<float const> a, std::span<float const> b);

}  // namespace gcmoe::testing::glm
