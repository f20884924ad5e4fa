#include "engine/sampling/sampler.h"

#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "tests/support/catch.h"

namespace gcmoe::sampling {
namespace {

// Logits whose softmax is exactly `probs` (at temperature 1).
std::vector<float> logits_of(std::vector<double> const& probs) {
  std::vector<float> logits;
  for (double const p : probs) {
    logits.push_back(static_cast<float>(std::log(p)));
  }
  return logits;
}

std::vector<double> distribution(std::vector<float> const& logits, SamplingParams const& params) {
  StatusOr<std::vector<double>> probs = sampling_distribution(logits, params, {});
  REQUIRE(probs.ok());
  return *probs;
}

void check_probs(std::vector<double> const& actual, std::vector<double> const& expected) {
  REQUIRE(actual.size() == expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    INFO("token " << i);
    CHECK(actual[i] == Approx(expected[i]).margin(1e-6));
  }
}

std::vector<double> const kFour = {0.5, 0.3, 0.15, 0.05};

TEST_CASE("greedy takes the argmax after penalties, lowest id on ties") {
  SamplingParams params;
  params.temperature = 0.0f;
  params.seed = 9;
  std::vector<float> const logits = {1.0f, 5.0f, 5.0f, 2.0f};
  CHECK(*sample_token(logits, params, {}) == 1);
  check_probs(distribution(logits, params), {0, 1, 0, 0});
  // Penalizing token 1 (seen in the prompt) hands the argmax to token 2.
  params.repetition_penalty = 1.5f;
  std::vector<std::int32_t> const prompt = {1};
  CHECK(*sample_token(logits, params, {prompt, {}}) == 2);
  // top_k 1 is greedy at any temperature.
  SamplingParams top1;
  top1.top_k = 1;
  top1.seed = 1;
  CHECK(*sample_token(logits, top1, {}) == 1);
}

TEST_CASE("temperature scales logits before the softmax") {
  std::vector<float> const logits = logits_of({1.0 / 7, 2.0 / 7, 4.0 / 7});
  check_probs(distribution(logits, {}), {1.0 / 7, 2.0 / 7, 4.0 / 7});
  SamplingParams hot;
  hot.temperature = 2.0f;  // p ~ sqrt(p): 1 : sqrt2 : 2
  double const z = 1.0 + std::sqrt(2.0) + 2.0;
  check_probs(distribution(logits, hot), {1.0 / z, std::sqrt(2.0) / z, 2.0 / z});
  SamplingParams cold;
  cold.temperature = 0.5f;  // p ~ p^2: 1 : 4 : 16
  check_probs(distribution(logits, cold), {1.0 / 21, 4.0 / 21, 16.0 / 21});
}

TEST_CASE("top-k keeps the k most likely tokens, renormalized") {
  SamplingParams params;
  params.top_k = 2;
  check_probs(distribution(logits_of(kFour), params), {0.5 / 0.8, 0.3 / 0.8, 0, 0});
  params.top_k = 100;  // larger than the vocabulary: no-op
  check_probs(distribution(logits_of(kFour), params), kFour);
}

TEST_CASE("top-p keeps the exact smallest prefix reaching p") {
  SamplingParams params;
  params.top_p = 0.4f;  // 0.5 alone reaches it
  check_probs(distribution(logits_of(kFour), params), {1, 0, 0, 0});
  params.top_p = 0.75f;  // 0.5 + 0.3
  check_probs(distribution(logits_of(kFour), params), {0.625, 0.375, 0, 0});
  params.top_p = 0.85f;  // 0.5 + 0.3 + 0.15
  check_probs(distribution(logits_of(kFour), params), {0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0});
  params.top_p = 1.0f;
  check_probs(distribution(logits_of(kFour), params), kFour);
  // Top-p is computed over the top-k-renormalized set: within {0.625, 0.375}, 0.6 needs only one.
  params.top_k = 2;
  params.top_p = 0.6f;
  check_probs(distribution(logits_of(kFour), params), {1, 0, 0, 0});
  params.top_p = 0.7f;
  check_probs(distribution(logits_of(kFour), params), {0.625, 0.375, 0, 0});
}

TEST_CASE("min-p drops tokens below min_p times the top probability") {
  SamplingParams params;
  params.min_p = 0.2f;  // threshold 0.1: drops 0.05
  check_probs(distribution(logits_of(kFour), params), {0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0});
  params.min_p = 0.5f;  // threshold 0.25
  check_probs(distribution(logits_of(kFour), params), {0.625, 0.375, 0, 0});
  params.min_p = 1.0f;  // only the top token
  check_probs(distribution(logits_of(kFour), params), {1, 0, 0, 0});
}

TEST_CASE("masked (-inf) logits are never kept") {
  float const inf = std::numeric_limits<float>::infinity();
  std::vector<float> const logits = {0.0f, -inf, 0.0f};
  check_probs(distribution(logits, {}), {0.5, 0, 0.5});
}

// Draw counts over `draws` independent seeds; chi-square against `expected` probabilities.
double chi_square(std::vector<float> const& logits, SamplingParams params,
                  std::vector<double> const& expected, int draws, std::map<int, int>& counts) {
  for (int i = 0; i < draws; ++i) {
    params.seed = 1000 + static_cast<std::uint64_t>(i);
    StatusOr<std::int32_t> const token = sample_token(logits, params, {});
    REQUIRE(token.ok());
    ++counts[*token];
  }
  double chi2 = 0.0;
  for (std::size_t t = 0; t < expected.size(); ++t) {
    if (expected[t] == 0.0) {
      CHECK(counts[static_cast<int>(t)] == 0);
      continue;
    }
    double const e = expected[t] * draws;
    double const d = counts[static_cast<int>(t)] - e;
    chi2 += d * d / e;
  }
  return chi2;
}

TEST_CASE("sampled frequencies follow the filtered distribution (chi-square, fixed seeds)") {
  constexpr int kDraws = 20000;
  std::map<int, int> plain;
  // 3 degrees of freedom: 16.27 is the 0.001 critical value.
  CHECK(chi_square(logits_of(kFour), {}, kFour, kDraws, plain) < 16.27);

  std::map<int, int> nucleus;
  SamplingParams top_p;
  top_p.top_p = 0.85f;  // 2 degrees of freedom: 13.82
  CHECK(chi_square(logits_of(kFour), top_p, {0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0}, kDraws,
                   nucleus) < 13.82);

  // A sampler that ignored the distribution (e.g. uniform) fails the same test by far.
  std::map<int, int> unused;
  CHECK(chi_square(logits_of(kFour), {}, {0.25, 0.25, 0.25, 0.25}, kDraws, unused) > 1000.0);
}

TEST_CASE("the draw at each step is keyed by (seed, tokens generated so far)") {
  std::vector<float> const logits = logits_of({0.25, 0.25, 0.25, 0.25});
  SamplingParams params;
  params.seed = 77;
  std::vector<std::int32_t> const output(64, 0);
  std::map<int, int> counts;
  std::vector<std::int32_t> first_run;
  for (std::size_t step = 0; step < output.size(); ++step) {
    std::span<std::int32_t const> const so_far(output.data(), step);
    StatusOr<std::int32_t> const token = sample_token(logits, params, {{}, so_far});
    REQUIRE(token.ok());
    first_run.push_back(*token);
    ++counts[*token];
    // Same (seed, step): same token, whatever else happened in between.
    CHECK(*sample_token(logits, params, {{}, so_far}) == *token);
  }
  // Steps draw fresh numbers: 64 uniform draws over 4 tokens all hit at least 3 tokens.
  CHECK(counts.size() >= 3);
  params.seed = 78;
  std::vector<std::int32_t> second_run;
  for (std::size_t step = 0; step < output.size(); ++step) {
    second_run.push_back(
        *sample_token(logits, params, {{}, std::span<std::int32_t const>(output.data(), step)}));
  }
  CHECK(first_run != second_run);
}

TEST_CASE("batch sampling is independent of batch composition and order") {
  std::vector<float> const a = {0.1f, 0.5f, 0.2f, 0.9f, -0.3f};
  std::vector<float> const b = {1.0f, 1.0f, 1.0f, 1.0f, 1.0f};
  std::vector<float> const c = {-2.0f, 0.0f, 2.0f, 0.0f, -2.0f};
  SamplingParams pa;
  pa.seed = 1;
  pa.temperature = 1.3f;
  SamplingParams pb;
  pb.seed = 2;
  pb.top_p = 0.9f;
  SamplingParams pc;
  pc.seed = 3;
  pc.min_p = 0.05f;
  pc.presence_penalty = 0.5f;
  std::vector<std::int32_t> const out_c = {2, 2};

  for (int trial = 0; trial < 20; ++trial) {
    pa.seed = 1 + 3 * trial;
    pb.seed = 2 + 3 * trial;
    pc.seed = 3 + 3 * trial;
    std::int32_t const alone_a = *sample_token(a, pa, {});
    std::int32_t const alone_b = *sample_token(b, pb, {});
    std::int32_t const alone_c = *sample_token(c, pc, {{}, out_c});

    std::vector<float> abc(a);
    abc.insert(abc.end(), b.begin(), b.end());
    abc.insert(abc.end(), c.begin(), c.end());
    std::vector<SamplingRow> const rows_abc = {{&pa, {}}, {&pb, {}}, {&pc, {{}, out_c}}};
    StatusOr<std::vector<std::int32_t>> const batch_abc = sample_batch(abc, 5, rows_abc);
    REQUIRE(batch_abc.ok());
    CHECK(*batch_abc == std::vector<std::int32_t>{alone_a, alone_b, alone_c});

    std::vector<float> cb(c);
    cb.insert(cb.end(), b.begin(), b.end());
    std::vector<SamplingRow> const rows_cb = {{&pc, {{}, out_c}}, {&pb, {}}};
    StatusOr<std::vector<std::int32_t>> const batch_cb = sample_batch(cb, 5, rows_cb);
    REQUIRE(batch_cb.ok());
    CHECK(*batch_cb == std::vector<std::int32_t>{alone_c, alone_b});
  }
}

TEST_CASE("sampler errors: no seed, NaN, empty, all masked, bad params, bad batch shape") {
  std::vector<float> const logits = {0.0f, 1.0f};
  SamplingParams unseeded;
  CHECK(sample_token(logits, unseeded, {}).status().code() == StatusCode::kFailedPrecondition);

  SamplingParams params;
  params.seed = 5;
  std::vector<float> const with_nan = {0.0f, std::numeric_limits<float>::quiet_NaN()};
  CHECK(sample_token(with_nan, params, {}).status().code() == StatusCode::kInvalidArgument);
  CHECK(sample_token({}, params, {}).status().code() == StatusCode::kInvalidArgument);
  float const inf = std::numeric_limits<float>::infinity();
  std::vector<float> const masked = {-inf, -inf};
  CHECK(sample_token(masked, params, {}).status().code() == StatusCode::kInvalidArgument);

  SamplingParams bad = params;
  bad.top_p = 0.0f;
  Status const status = sample_token(logits, bad, {}).status();
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK(status.message().find("top_p") != std::string::npos);

  std::vector<SamplingRow> const rows = {{&params, {}}};
  CHECK(sample_batch(logits, 3, rows).status().code() == StatusCode::kInvalidArgument);
  std::vector<SamplingRow> const unseeded_rows = {{&params, {}}, {&unseeded, {}}};
  std::vector<float> const two_rows = {0.0f, 1.0f, 0.0f, 1.0f};
  Status const row_error = sample_batch(two_rows, 2, unseeded_rows).status();
  CHECK(row_error.code() == StatusCode::kFailedPrecondition);
  CHECK(row_error.message().find("batch row 1") != std::string::npos);
}

}  // namespace
}  // namespace gcmoe::sampling
