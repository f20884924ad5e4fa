#include "client/request_generator.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/common/check.h"

namespace gcmoe::client {

LengthRange length_range(std::int64_t len, double range_ratio) {
  auto const scaled = [&](double factor) {
    return static_cast<std::int64_t>(std::floor(static_cast<double>(len) * factor));
  };
  LengthRange range{scaled(1.0 - range_ratio), scaled(1.0 + range_ratio)};
  range.low = std::max<std::int64_t>(range.low, 1);
  range.high = std::max(range.high, range.low);
  return range;
}

StatusOr<RandomRequestGenerator> RandomRequestGenerator::create(RandomDatasetConfig const& config) {
  GCMOE_CHECK_ARG(config.input_len >= 1, "--random-input-len must be >= 1, got {}",
                  config.input_len);
  GCMOE_CHECK_ARG(config.output_len >= 1, "--random-output-len must be >= 1, got {}",
                  config.output_len);
  GCMOE_CHECK_ARG(config.range_ratio >= 0.0 && config.range_ratio < 1.0,
                  "--random-range-ratio must be in [0, 1), got {}", config.range_ratio);
  GCMOE_CHECK_ARG(config.vocab_size >= 1, "vocabulary size must be >= 1");
  LengthRange const out = length_range(config.output_len, config.range_ratio);
  GCMOE_CHECK_ARG(out.high <= std::numeric_limits<std::uint32_t>::max(),
                  "--random-output-len {} is too large", config.output_len);
  return RandomRequestGenerator(config);
}

RandomRequestGenerator::RandomRequestGenerator(RandomDatasetConfig const& config)
    : config_(config), engine_(config.seed), token_(0, config.vocab_size - 1) {
  LengthRange const in = length_range(config.input_len, config.range_ratio);
  LengthRange const out = length_range(config.output_len, config.range_ratio);
  input_len_ = std::uniform_int_distribution<std::int64_t>(in.low, in.high);
  output_len_ = std::uniform_int_distribution<std::int64_t>(out.low, out.high);
}

BenchRequest RandomRequestGenerator::next() {
  BenchRequest request;
  request.index = next_index_++;
  std::int64_t const input_len = input_len_(engine_);
  request.max_new_tokens = static_cast<std::uint32_t>(output_len_(engine_));
  request.prompt_token_ids.resize(static_cast<std::size_t>(input_len));
  for (std::uint32_t& id : request.prompt_token_ids) {
    id = token_(engine_);
  }
  return request;
}

}  // namespace gcmoe::client
