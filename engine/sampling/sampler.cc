#include "engine/sampling/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "engine/common/check.h"
#include "engine/sampling/philox.h"

namespace gcmoe::sampling {
namespace {

struct Candidate {
  std::int32_t token;
  double prob;
};

// Logits after penalties; checks the row.
StatusOr<std::vector<float>> penalized(std::span<float const> logits, SamplingParams const& params,
                                       TokenHistory const& history) {
  GCMOE_CHECK_ARG(!logits.empty(), "empty logits row");
  GCMOE_CHECK_ARG(logits.size() <= static_cast<std::size_t>(std::numeric_limits<int32_t>::max()),
                  "vocabulary of {} does not fit int32 token ids", logits.size());
  GCMOE_RETURN_IF_ERROR(validate_sampling_params(params));
  std::vector<float> work(logits.begin(), logits.end());
  bool any_finite = false;
  for (std::size_t i = 0; i < work.size(); ++i) {
    GCMOE_CHECK_ARG(!std::isnan(work[i]), "logit of token {} is NaN", i);
    any_finite = any_finite || std::isfinite(work[i]);
  }
  GCMOE_CHECK_ARG(any_finite, "no finite logit in a row of {}", work.size());
  GCMOE_RETURN_IF_ERROR(apply_penalties(work, params, history));
  return work;
}

std::int32_t argmax(std::vector<float> const& work) {
  // max_element keeps the first of equal maxima: the lowest id wins ties.
  return static_cast<std::int32_t>(std::max_element(work.begin(), work.end()) - work.begin());
}

// The kept tokens in (probability desc, id asc) order with renormalized probabilities.
std::vector<Candidate> filtered_candidates(std::vector<float> const& work,
                                           SamplingParams const& params) {
  std::size_t const vocab = work.size();
  std::vector<std::int32_t> order(vocab);
  std::iota(order.begin(), order.end(), 0);
  auto const before = [&](std::int32_t a, std::int32_t b) {
    float const la = work[static_cast<std::size_t>(a)];
    float const lb = work[static_cast<std::size_t>(b)];
    return la > lb || (la == lb && a < b);
  };
  std::size_t keep = vocab;
  if (params.top_k > 0) {
    keep = std::min(keep, static_cast<std::size_t>(params.top_k));
  }
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(),
                    before);

  // Temperature-scaled logits relative to the top one: exp() of them is an unnormalized prob.
  double const inv_temperature = 1.0 / static_cast<double>(params.temperature);
  double const top = static_cast<double>(work[static_cast<std::size_t>(order[0])]);
  std::vector<Candidate> kept;
  kept.reserve(keep);
  for (std::size_t i = 0; i < keep; ++i) {
    double const logit = static_cast<double>(work[static_cast<std::size_t>(order[i])]);
    double const weight = std::exp((logit - top) * inv_temperature);  // in [0, 1], top = 1
    // min-p against the top token: p_i / p_max = weight. Drops -inf logits (weight 0) too.
    if (weight <= 0.0 || weight < static_cast<double>(params.min_p)) {
      break;
    }
    kept.push_back({order[i], weight});
  }
  double total = 0.0;
  for (Candidate const& c : kept) {
    total += c.prob;
  }
  for (Candidate& c : kept) {
    c.prob /= total;
  }
  if (params.top_p < 1.0f) {
    // Smallest prefix whose mass reaches top_p (never empty), then renormalize.
    double mass = 0.0;
    std::size_t prefix = 0;
    while (prefix < kept.size() && mass < static_cast<double>(params.top_p)) {
      mass += kept[prefix].prob;
      ++prefix;
    }
    kept.resize(prefix);  // >= 1: top_p > 0 and kept is never empty
    for (Candidate& c : kept) {
      c.prob /= mass;
    }
  }
  return kept;
}

}  // namespace

StatusOr<std::vector<double>> sampling_distribution(std::span<float const> logits,
                                                    SamplingParams const& params,
                                                    TokenHistory const& history) {
  GCMOE_ASSIGN_OR_RETURN(std::vector<float> const work, penalized(logits, params, history));
  std::vector<double> probs(work.size(), 0.0);
  if (params.greedy()) {
    probs[static_cast<std::size_t>(argmax(work))] = 1.0;
    return probs;
  }
  for (Candidate const& c : filtered_candidates(work, params)) {
    probs[static_cast<std::size_t>(c.token)] = c.prob;
  }
  return probs;
}

StatusOr<std::int32_t> sample_token(std::span<float const> logits, SamplingParams const& params,
                                    TokenHistory const& history) {
  if (!params.seed.has_value()) {
    return failed_precondition_error("sampling without a seed: admission must assign one");
  }
  GCMOE_ASSIGN_OR_RETURN(std::vector<float> const work, penalized(logits, params, history));
  if (params.greedy()) {
    return argmax(work);
  }
  std::vector<Candidate> const kept = filtered_candidates(work, params);
  double const u = philox_uniform(*params.seed, history.output.size());
  double cumulative = 0.0;
  for (Candidate const& c : kept) {
    cumulative += c.prob;
    if (u < cumulative) {
      return c.token;
    }
  }
  // Rounding left the cumulative sum a hair under u: the last kept token.
  return kept.back().token;
}

StatusOr<std::vector<std::int32_t>> sample_batch(std::span<float const> logits, std::size_t vocab,
                                                 std::span<SamplingRow const> rows) {
  GCMOE_CHECK_ARG(vocab > 0 && logits.size() == rows.size() * vocab,
                  "logits hold {} values, expected {} rows x {} vocab", logits.size(), rows.size(),
                  vocab);
  std::vector<std::int32_t> tokens;
  tokens.reserve(rows.size());
  for (std::size_t r = 0; r < rows.size(); ++r) {
    GCMOE_CHECK_ARG(rows[r].params != nullptr, "row {} has no sampling parameters", r);
    StatusOr<std::int32_t> token =
        sample_token(logits.subspan(r * vocab, vocab), *rows[r].params, rows[r].history);
    if (!token.ok()) {
      return token.status().with_context(fmt::format("batch row {}", r));
    }
    tokens.push_back(*token);
  }
  return tokens;
}

}  // namespace gcmoe::sampling
