#include "kernels/moe/gc_partition_plan.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "engine/common/check.h"

namespace gcmoe::kernels {

GcPartitionPlan GcPartitionPlan::uniform(int comm_sms) {
  GcPartitionPlan plan;
  plan.steps_.push_back({.max_tokens = 1, .comm_sms = comm_sms});
  return plan;
}

StatusOr<GcPartitionPlan> GcPartitionPlan::create(std::vector<GcPartitionStep> steps) {
  GCMOE_CHECK_ARG(!steps.empty(), "a partition plan with no steps");
  int previous = 0;
  for (GcPartitionStep const& s : steps) {
    GCMOE_CHECK_ARG(s.max_tokens > previous,
                    "partition plan steps must cover increasing token counts ({} after {})",
                    s.max_tokens, previous);
    GCMOE_CHECK_ARG(s.comm_sms >= 0, "a comm partition of {} SMs", s.comm_sms);
    GCMOE_CHECK_ARG(!s.overlapped || s.comm_sms == 0,
                    "a partition plan step with a comm partition ({} SMs) and overlapped: the "
                    "overlapped body is the no-partition choice",
                    s.comm_sms);
    GCMOE_CHECK_ARG(!s.down_by_rows || s.overlap_down,
                    "partition plan step up to {} tokens: down_by_rows needs overlap_down (L2 by "
                    "PDL acquires L1's rows)",
                    s.max_tokens);
    GCMOE_CHECK_ARG(!s.down_by_rows || s.comm_sms > 0 || s.overlapped,
                    "partition plan step up to {} tokens: down_by_rows in the sequential graph, "
                    "which has no PDL (a comm partition or overlapped)",
                    s.max_tokens);
    previous = s.max_tokens;
  }
  GcPartitionPlan plan;
  plan.steps_ = std::move(steps);
  return plan;
}

namespace {

// Whether two steps make the same choice, whatever token counts they cover (every field but
// max_tokens, through the step's own equality: a field added later is compared too).
bool same_choice(GcPartitionStep a, GcPartitionStep const& b) {
  a.max_tokens = b.max_tokens;
  return a == b;
}

}  // namespace

StatusOr<GcPartitionPlan> GcPartitionPlan::choose(std::span<GcPartitionMeasurement const> measured,
                                                  double min_gain) {
  GCMOE_CHECK_ARG(!measured.empty(), "no measurements to choose a partition plan from");
  GCMOE_CHECK_ARG(min_gain >= 1.0, "a minimum gain of {} (1.0 = any win)", min_gain);
  std::vector<GcPartitionMeasurement> sorted(measured.begin(), measured.end());
  std::sort(sorted.begin(), sorted.end(),
            [](auto const& a, auto const& b) { return a.tokens < b.tokens; });
  std::vector<GcPartitionStep> steps;
  for (GcPartitionMeasurement const& m : sorted) {
    GCMOE_CHECK_ARG(m.sequential_us > 0.0 && m.sequential_separate_us >= 0.0,
                    "{} tokens: no sequential time", m.tokens);
    bool const separate =
        m.sequential_separate_us > 0.0 && m.sequential_separate_us < m.sequential_us;
    GCMOE_CHECK_ARG(m.overlapped_us >= 0.0 && m.overlapped_plain_us >= 0.0,
                    "{} tokens: overlapped at {} µs (L2 plainly {} µs)", m.tokens, m.overlapped_us,
                    m.overlapped_plain_us);
    // The overlapped body's candidate: with L2 by PDL or plainly, the faster of those that won
    // every pair against the sequential graph.
    bool const pdl_candidate = m.overlapped_won_every_round && m.overlapped_us > 0.0;
    bool const plain_candidate = m.overlapped_plain_won_every_round && m.overlapped_plain_us > 0.0;
    bool const plain =
        plain_candidate && (!pdl_candidate || m.overlapped_plain_us < m.overlapped_us);
    bool const overlapped_candidate = pdl_candidate || plain_candidate;
    double const overlapped_us = plain ? m.overlapped_plain_us : m.overlapped_us;
    // A partition must beat the faster sequential placement by min_gain, and the overlapped
    // body where that is a candidate.
    int choice = 0;
    double best = (separate ? m.sequential_separate_us : m.sequential_us) / min_gain;
    if (overlapped_candidate) {
      best = std::min(best, overlapped_us);
    }
    for (auto const& [sms, us] : m.gc_us) {
      GCMOE_CHECK_ARG(sms > 0 && us > 0.0, "{} tokens: comm {} SMs at {} µs", m.tokens, sms, us);
      if (us < best) {
        best = us;
        choice = sms;
      }
    }
    bool const overlapped = choice == 0 && overlapped_candidate;
    // The sequential graph has no PDL to turn off: its steps keep the default.
    bool const gc_graph = choice > 0 || overlapped;
    bool const l2_plain = (overlapped && plain) || (gc_graph && m.without_pdl_won_every_round);
    GcPartitionStep const next{.max_tokens = m.tokens,
                               .comm_sms = choice,
                               .shared_separate = choice == 0 && !overlapped && separate,
                               .overlapped = overlapped,
                               .overlap_down = !l2_plain,
                               .down_by_rows = gc_graph && !l2_plain && m.by_rows_won_every_round};
    if (!steps.empty() && same_choice(steps.back(), next)) {
      steps.back().max_tokens = m.tokens;
    } else {
      steps.push_back(next);
    }
  }
  return create(std::move(steps));
}

GcPartitionStep const& GcPartitionPlan::step(int tokens) const {
  for (GcPartitionStep const& s : steps_) {
    if (tokens <= s.max_tokens) {
      return s;
    }
  }
  return steps_.back();
}

std::vector<int> GcPartitionPlan::comm_sizes() const {
  std::set<int> sizes;
  for (GcPartitionStep const& s : steps_) {
    if (s.comm_sms > 0) {
      sizes.insert(s.comm_sms);
    }
  }
  return {sizes.begin(), sizes.end()};
}

std::string GcPartitionPlan::to_json() const {
  nlohmann::json steps = nlohmann::json::array();
  for (GcPartitionStep const& s : steps_) {
    steps.push_back({{"max_tokens", s.max_tokens},
                     {"comm_sms", s.comm_sms},
                     {"shared_separate", s.shared_separate},
                     {"overlapped", s.overlapped},
                     {"overlap_down", s.overlap_down},
                     {"down_by_rows", s.down_by_rows}});
  }
  return nlohmann::json{{"steps", steps}}.dump(2);
}

StatusOr<GcPartitionPlan> GcPartitionPlan::from_json(std::string const& text) {
  nlohmann::json const json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  GCMOE_CHECK_ARG(!json.is_discarded(), "a partition plan that is not JSON");
  GCMOE_CHECK_ARG(json.is_object() && json.contains("steps") && json["steps"].is_array(),
                  "a partition plan needs a \"steps\" array");
  std::vector<GcPartitionStep> steps;
  for (nlohmann::json const& s : json["steps"]) {
    GCMOE_CHECK_ARG(s.is_object() && s.contains("max_tokens") &&
                        s["max_tokens"].is_number_integer() && s.contains("comm_sms") &&
                        s["comm_sms"].is_number_integer(),
                    "partition plan step {} needs integer max_tokens and comm_sms", steps.size());
    GCMOE_CHECK_ARG(!s.contains("shared_separate") || s["shared_separate"].is_boolean(),
                    "partition plan step {}: shared_separate must be true or false", steps.size());
    GCMOE_CHECK_ARG(!s.contains("overlapped") || s["overlapped"].is_boolean(),
                    "partition plan step {}: overlapped must be true or false", steps.size());
    GCMOE_CHECK_ARG(!s.contains("overlap_down") || s["overlap_down"].is_boolean(),
                    "partition plan step {}: overlap_down must be true or false", steps.size());
    GCMOE_CHECK_ARG(!s.contains("down_by_rows") || s["down_by_rows"].is_boolean(),
                    "partition plan step {}: down_by_rows must be true or false", steps.size());
    bool const separate = s.contains("shared_separate") && s["shared_separate"].get<bool>();
    bool const overlapped = s.contains("overlapped") && s["overlapped"].get<bool>();
    bool const overlap_down = !s.contains("overlap_down") || s["overlap_down"].get<bool>();
    steps.push_back({.max_tokens = s["max_tokens"].get<int>(),
                     .comm_sms = s["comm_sms"].get<int>(),
                     .shared_separate = separate,
                     .overlapped = overlapped,
                     .overlap_down = overlap_down,
                     .down_by_rows = s.contains("down_by_rows") && s["down_by_rows"].get<bool>()});
  }
  return create(std::move(steps));
}

}  // namespace gcmoe::kernels
