#pragma once
// Which comm partition the GC-MoE layer (kernels/moe/gc_moe_layer.h) uses for each token-count
// bucket — or none: at some decode sizes splitting the GPU costs more than the overlap buys
// (GLM-5.2 at 2 tokens: its 256 L1 CTAs need every SM for one wave), and there the layer runs
// over the whole device, its sequential graph or the GC-MoE body without a split
// (GcPartitionStep::overlapped). A plain object, chosen from measurements (bench_moe_layer
// --plan-out, which times the candidates in pairs with the sequential layer) or given as one size
// for every bucket.

#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/common/status.h"

namespace gcmoe::kernels {

struct GcPartitionStep {
  int max_tokens = 0;  // this step covers token counts up to here (after the previous step's)
  int comm_sms = 0;    // 0: no partition (the whole device)
  // Without partition: the shared expert in launches of its own instead of in the routed
  // experts' (faster from a few dozen tokens on, when the fused launch's hint mixes a
  // one-row-per-token expert with sparse routed ones).
  bool shared_separate = false;
  // Without partition: the GC-MoE body on the whole device (the shared expert on a second stream,
  // L2 overlapping L1 by programmatic dependent launch, the row flags) instead of the one-stream
  // sequential graph. Single-rank layer (GcMoeLayer) only; the shared expert then runs apart.
  bool overlapped = false;
  // In the GC-MoE graph (a comm partition, overlapped, or the expert-parallel layer's step): L2
  // launched by programmatic dependent launch to start while L1 drains (true), or after it. PDL
  // gains a few µs at most sizes and loses at some (bench/NOTES.md: the MXFP4 layer at T = 1-2,
  // the FP8 pair at one rank of eight T=256), so the plan takes it per bucket. Only L2's launch:
  // the small kernels' launch chains stay on in every GC-MoE graph (GcMoeOptions::chain). The
  // single-rank layer's sequential graph never uses PDL.
  bool overlap_down = true;
  // With overlap_down, in a GC-MoE graph: each L2 acquires its L1's rows pass by pass
  // (kernels/moe/expert_rows_handshake.h) instead of waiting for L1's whole grid, so its first
  // CTAs run on the SMs L1's last wave leaves idle; the combine zeroes the counters (a small kernel
  // after L2 on an expert-parallel rank without tokens of its own). The FFN benchmarks measured
  // FP8 1.01-1.06x and MXFP4 0.90-1.07x against plain PDL (bench/NOTES.md, twenty-first session),
  // so the plan takes it per bucket. The expert-parallel layer takes it from its plan too
  // (EpMoeRank::set_down_by_rows).
  bool down_by_rows = false;
  bool operator==(GcPartitionStep const&) const = default;
};

// One token count of a bench_moe_layer sweep: µs per layer.
struct GcPartitionMeasurement {
  int tokens = 0;
  double sequential_us = 0.0;           // the shared expert in the routed launches (or none)
  double sequential_separate_us = 0.0;  // in its own launches; 0: not measured
  std::vector<std::pair<int, double>> gc_us = {};  // (comm SMs, µs): the split candidates
  // The GC-MoE body without partition (GcPartitionStep::overlapped), µs; 0: not measured. Taken
  // in pairs with the sequential graph (alternating order), and a candidate only where it was
  // faster in every pair: the two differ by less than single timings drift (bench/NOTES.md).
  double overlapped_us = 0.0;
  bool overlapped_won_every_round = false;
  // The same body with L2 launched after L1 (overlap_down = false), measured the same way; 0: not
  // measured. Where both are candidates the faster is.
  double overlapped_plain_us = 0.0;
  bool overlapped_plain_won_every_round = false;
  // The GC-MoE graph this token count's choice runs (a split or the overlapped body), with L2
  // launched plainly, won every pair against the same graph with L2 by PDL: the step gets
  // overlap_down = false. Measured after a first choose() on the plan it returned (the bench
  // chooses twice: the choice itself does not depend on this field).
  bool without_pdl_won_every_round = false;
  // Measured the same way: that graph with L2 acquiring L1's rows (down_by_rows) won every pair
  // against itself with L2 waiting for L1's grid. The step gets down_by_rows unless L2 goes
  // plainly (without_pdl_won_every_round, or the overlapped body's plain candidate).
  bool by_rows_won_every_round = false;
};

class GcPartitionPlan {
 public:
  // The same comm partition for every bucket.
  static GcPartitionPlan uniform(int comm_sms);
  // Steps with strictly increasing max_tokens (≥ 1) and comm_sms ≥ 0; token counts beyond the last
  // step use the last step's choice.
  static StatusOr<GcPartitionPlan> create(std::vector<GcPartitionStep> steps);
  // For each measured token count: the fastest comm size when it beats the faster sequential
  // placement by at least `min_gain` (1.02 = 2%: smaller differences are within run-to-run
  // noise) and the overlapped body where that is a candidate (GcPartitionMeasurement), else the
  // overlapped body if a candidate (with L2 by PDL or plainly, the faster candidate), else none
  // with the faster placement; L2 by PDL unless the chosen GC-MoE graph lost to itself without it
  // in every pair (without_pdl_won_every_round) or is the overlapped body's plain candidate;
  // with L2 by PDL, L2 by rows where that won every pair (by_rows_won_every_round).
  // Neighbouring token counts with the same choice merge.
  static StatusOr<GcPartitionPlan> choose(std::span<GcPartitionMeasurement const> measured,
                                          double min_gain);

  // The step covering `tokens` (beyond the last step: the last).
  GcPartitionStep const& step(int tokens) const;
  int comm_sms(int tokens) const { return step(tokens).comm_sms; }
  std::span<GcPartitionStep const> steps() const { return steps_; }
  // The distinct nonzero comm sizes, ascending (one green-context split each).
  std::vector<int> comm_sizes() const;
  // {"steps": [{"max_tokens": 1, "comm_sms": 16, "shared_separate": false, "overlapped": false,
  // "overlap_down": true, "down_by_rows": false}, ...]}; "shared_separate", "overlapped" and
  // "down_by_rows" may be left out (false), and "overlap_down" (true).
  std::string to_json() const;
  static StatusOr<GcPartitionPlan> from_json(std::string const& text);

 private:
  std::vector<GcPartitionStep> steps_;
};

}  // namespace gcmoe::kernels
