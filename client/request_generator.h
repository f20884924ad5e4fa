#pragma once
// The "random" dataset of `vllm bench serve`, token-in: each request gets a prompt of random
// token ids and a max_new_tokens, with lengths drawn uniformly from [len·(1−r), len·(1+r)]
// (r = --random-range-ratio; r = 0 gives exactly len). Deterministic for a seed.

#include <cstdint>
#include <random>
#include <vector>

#include "engine/common/status.h"

namespace gcmoe::client {

struct RandomDatasetConfig {
  std::int64_t input_len = 1024;
  std::int64_t output_len = 128;
  double range_ratio = 0.0;
  std::uint32_t vocab_size = 0;  // token ids are drawn from [0, vocab_size)
  std::uint64_t seed = 0;
};

struct BenchRequest {
  std::int64_t index = 0;  // 0-based order of generation (warmup requests included)
  std::vector<std::uint32_t> prompt_token_ids;
  std::uint32_t max_new_tokens = 0;
};

// Inclusive bounds of a length drawn around `len` with ratio `r`, never below 1.
struct LengthRange {
  std::int64_t low = 1;
  std::int64_t high = 1;
};
LengthRange length_range(std::int64_t len, double range_ratio);

class RandomRequestGenerator {
 public:
  // INVALID_ARGUMENT for lengths < 1, a ratio outside [0, 1) or an empty vocabulary.
  static StatusOr<RandomRequestGenerator> create(RandomDatasetConfig const& config);

  BenchRequest next();

 private:
  explicit RandomRequestGenerator(RandomDatasetConfig const& config);

  RandomDatasetConfig config_;
  std::mt19937_64 engine_;
  std::uniform_int_distribution<std::int64_t> input_len_;
  std::uniform_int_distribution<std::int64_t> output_len_;
  std::uniform_int_distribution<std::uint32_t> token_;
  std::int64_t next_index_ = 0;
};

}  // namespace gcmoe::client
