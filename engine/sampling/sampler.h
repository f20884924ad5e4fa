#pragma once
// CPU sampler: one row of fp32 logits in, one token id out. The order follows vLLM:
// penalties → temperature → min-p → top-k → top-p → draw. Greedy (temperature 0 or top_k 1)
// takes the argmax after penalties (lowest id on ties).
//
// The draw is inverse-CDF over the kept tokens in (probability desc, id asc) order with one
// Philox uniform keyed by (seed, step), where step = the number of tokens already generated.
// A request's tokens therefore depend only on its logits, history and seed: not on the batch it
// was sampled in, nor the batch's order.

#include <cstdint>
#include <span>
#include <vector>

#include "engine/common/status.h"
#include "engine/sampling/penalties.h"
#include "engine/sampling/sampling_params.h"

namespace gcmoe::sampling {

// Probability per vocabulary entry after every filter (0 for filtered tokens), summing to 1;
// one-hot for greedy parameters. INVALID_ARGUMENT for an empty row, a NaN logit, a row with no
// finite logit, parameters out of range, or a history token outside the vocabulary.
StatusOr<std::vector<double>> sampling_distribution(std::span<float const> logits,
                                                    SamplingParams const& params,
                                                    TokenHistory const& history);

// The next token of one sequence. params.seed must be set — whoever admits the request draws
// one when the client gave none — FAILED_PRECONDITION otherwise, since the draw would not be
// reproducible.
StatusOr<std::int32_t> sample_token(std::span<float const> logits, SamplingParams const& params,
                                    TokenHistory const& history);

// One row of a batch: the sequence's parameters and history.
struct SamplingRow {
  SamplingParams const* params = nullptr;
  TokenHistory history;
};

// Samples every row of a [rows.size(), vocab] row-major logits matrix.
StatusOr<std::vector<std::int32_t>> sample_batch(std::span<float const> logits, std::size_t vocab,
                                                 std::span<SamplingRow const> rows);

}  // namespace gcmoe::sampling
