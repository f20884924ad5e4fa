#include "tests/unit/model/glm/glm_test_support.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>

#include "engine/common/check.h"
#include "engine/model/step_model_factory.h"
#include "tests/support/catch.h"

namespace gcmoe::testing::glm {
namespace {

// Static initialization runs on the thread that later runs every test case.
std::thread::id const kTestThread = std::this_thread::get_id();

// Catch2 macros off the test's thread race with its own (lost counts, a corrupted message stack:
// double frees, bad_array_new_length); stop at the first such call instead.
void require_test_thread(char const* what) {
  if (std::this_thread::get_id() != kTestThread) {
    std::fprintf(stderr, "%s uses Catch2 macros: call it on the test's thread only\n", what);
    std::abort();
  }
}

}  // namespace

std::filesystem::path fixture_dir() {
  return GCMOE_GLM_FIXTURE_DIR;
}

std::vector<Golden> load_goldens() {
  std::ifstream in(fixture_dir() / "goldens.json");
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json const json = nlohmann::json::parse(text.str());
  std::vector<Golden> out;
  for (nlohmann::json const& p : json.at("prompts")) {
    Golden g;
    g.prompt = p.at("tokens").get<std::vector<std::uint32_t>>();
    g.greedy = p.at("greedy").get<std::vector<std::uint32_t>>();
    for (auto const& [step, values] : p.at("logits").items()) {
      g.logits[std::stoi(step)] = values.get<std::vector<float>>();
    }
    out.push_back(std::move(g));
  }
  return out;
}

std::unique_ptr<runtime::StepModel> load_fixture_model(runtime::Communicator& comm,
                                                       std::int32_t const max_batch_tokens) {
  model::StepModelOptions options;
  options.model_dir = fixture_dir();
  options.kv_blocks = kKvBlocks;
  options.kv_block_size = kBlockSize;
  options.max_batch_tokens = max_batch_tokens;
  auto loaded = model::load_step_model(options, comm);
  INFO(loaded.status().message());
  REQUIRE(loaded.ok());
  return std::move(loaded).value();
}

Driver::Driver(runtime::StepModel& model, std::int32_t const kv_blocks,
               std::int32_t const block_size, std::uint64_t const seed)
    : model_(model), block_size_(block_size), free_blocks_(static_cast<std::size_t>(kv_blocks)) {
  std::iota(free_blocks_.begin(), free_blocks_.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(free_blocks_.begin(), free_blocks_.end(), rng);
}

StatusOr<std::int32_t> Driver::try_add_sequence(std::int32_t const max_positions) {
  std::int32_t const blocks = (max_positions + block_size_ - 1) / block_size_;
  if (static_cast<std::int32_t>(free_blocks_.size()) < blocks) {
    return resource_exhausted_error(fmt::format("{} positions need {} blocks; {} are free",
                                                max_positions, blocks, free_blocks_.size()));
  }
  tables_.emplace_back(free_blocks_.end() - blocks, free_blocks_.end());
  free_blocks_.resize(free_blocks_.size() - static_cast<std::size_t>(blocks));
  lengths_.push_back(0);
  return static_cast<std::int32_t>(tables_.size()) - 1;
}

std::int32_t Driver::add_sequence(std::int32_t const max_positions) {
  require_test_thread("Driver::add_sequence");
  StatusOr<std::int32_t> const seq = try_add_sequence(max_positions);
  INFO(seq.status().message());
  REQUIRE(seq.ok());
  return *seq;
}

Status Driver::step(std::vector<Work> const& work, std::vector<float>& logits) {
  std::vector<scheduler::BatchEntry> entries;
  std::vector<std::uint32_t> ids;
  std::vector<std::span<std::int32_t const>> tables;
  for (Work const& w : work) {
    auto const seq = static_cast<std::size_t>(w.seq);
    entries.push_back({.id = static_cast<scheduler::SequenceId>(w.seq),
                       .start_position = lengths_[seq],
                       .num_tokens = static_cast<std::int32_t>(w.tokens.size()),
                       .is_prefill = w.tokens.size() > 1 || lengths_[seq] == 0,
                       .samples_token = w.samples});
    ids.insert(ids.end(), w.tokens.begin(), w.tokens.end());
    tables.emplace_back(tables_[seq]);
  }
  Status const status = model_.step({entries, ids, tables}, logits);
  if (status.ok()) {
    for (Work const& w : work) {
      lengths_[static_cast<std::size_t>(w.seq)] += static_cast<std::int32_t>(w.tokens.size());
    }
  }
  return status;
}

Status try_generate(Driver& driver, std::vector<std::uint32_t> const& prompt,
                    std::int32_t const steps, Generation& out, std::int32_t const chunk) {
  GCMOE_ASSIGN_OR_RETURN(std::int32_t const seq,
                         driver.try_add_sequence(static_cast<std::int32_t>(prompt.size()) + steps));
  std::size_t const piece = chunk > 0 ? static_cast<std::size_t>(chunk) : prompt.size();
  std::vector<float> logits;
  for (std::size_t start = 0; start < prompt.size(); start += piece) {
    std::size_t const end = std::min(prompt.size(), start + piece);
    GCMOE_RETURN_IF_ERROR(driver.step(
        {{.seq = seq,
          .tokens = std::vector<std::uint32_t>(prompt.begin() + static_cast<std::ptrdiff_t>(start),
                                               prompt.begin() + static_cast<std::ptrdiff_t>(end)),
          .samples = end == prompt.size()}},
        logits));
  }
  for (std::int32_t s = 0; s < steps; ++s) {
    out.logits[s] = logits;
    out.tokens.push_back(argmax(logits));
    if (s + 1 == steps) {
      break;
    }
    GCMOE_RETURN_IF_ERROR(driver.step({{.seq = seq, .tokens = {out.tokens.back()}}}, logits));
  }
  return Status();
}

Generation generate(Driver& driver, std::vector<std::uint32_t> const& prompt,
                    std::int32_t const steps, std::int32_t const chunk) {
  require_test_thread("generate");
  Generation out;
  Status const status = try_generate(driver, prompt, steps, out, chunk);
  INFO(status.message());
  REQUIRE(status.ok());
  return out;
}

std::uint32_t argmax(std::span<float const> logits) {
  return static_cast<std::uint32_t>(std::max_element(logits.begin(), logits.end()) -
                                    logits.begin());
}

double max_abs_error(std::span<float const> a, std::span<float const> b) {
  double worst = 0.0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    double const d = std::abs(static_cast<double>(a[i]) - static_cast<double>(b[i]));
    worst = std::isnan(d) ? INFINITY : std::max(worst, d);
  }
  return a.size() == b.size() ? worst : INFINITY;
}

}  // namespace gcmoe::testing::glm
