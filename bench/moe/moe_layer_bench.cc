// bench_moe_layer: one whole MoE layer on one GPU (one rank): the GC-MoE operator
// (kernels/moe/gc_moe_layer.h: dispatch on a comm partition and the expert GEMM on the compute
// partition as concurrent graph roots joined by token-ring flags, L2 overlapping L1's tail)
// against the sequential baseline (the same kernels on one stream over the whole device), in the
// same run, with a sweep of the comm partition's size. Shapes: GLM-5.2 (H 6144, I 2048, 256
// experts, top-8) and DeepSeek-V4.1-Flash (H 5120, I 2304, 384 experts, top-6), each in its
// release's expert formats (GLM FP8; V4.1 MXFP4 routed experts with an FP8 shared expert, which
// then runs in launches of its own), each with and without the shared expert.
//
// The baseline is timed with the shared expert in the routed experts' launches and in launches of
// its own (the same without a shared expert); the faster is "sequential". Time: median over reps of
// `--layers` back-to-back graph replays (layers replayed with no host work between them), per
// layer. Floor: the bytes the layer must read (touched experts, the shared expert, the fp32 router)
// over the SM read-stream ceiling measured in the same run.
//
// Per model and shared-expert setting, the sweep also times the GC-MoE body without a partition
// (the shared expert on a second stream, the small kernels in launch chains), with L2 overlapping
// L1 and with L2 after L1, each in --rounds pairs with the sequential graph, then picks a
// per-bucket partition plan (kernels/moe/gc_partition_plan.h: the fastest comm size where its
// single timing beats the sequential layer by --min-gain and it then won every pair with it, else
// the faster overlapped body that won every pair, else the sequential graph), then
// times that plan's GC-MoE graphs with and without L2 by programmatic dependent launch in pairs and
// turns PDL off in the buckets where it lost every pair (GcPartitionStep::overlap_down), and
// times the planned layer again at every point, once alone and
// then in --rounds pairs with the faster sequential graph, the order alternating ("back_to_back":
// the median of the per-round ratios and their spread, with the SM clock over those rounds).
//
// Usage: bench_moe_layer [--out FILE] [--reps 20] [--layers 4] [--commit SHA] [--comm 8,16,...]
//                        [--model glm5.2|deepseek-v4.1|all] [--tokens N] [--min-gain 1.02]
//                        [--plan-out FILE] [--rounds 9] [--ablations] [--overlapped-variants]
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bench/common/device_fill.h"
#include "bench/common/gpu_clock_sampler.h"
#include "bench/common/gpu_timing.h"
#include "bench/common/moe_layer_weights.h"
#include "bench/common/paired_rounds.h"
#include "bench/moe/moe_layer_timing.h"
#include "engine/backends/cuda/device_buffer.h"
#include "engine/common/cuda_check.h"
#include "kernels/moe/gc_moe_layer.h"
#include "kernels/moe/packed_expert_sections.h"

namespace gcmoe::bench {
namespace {

using cuda::DeviceBuffer;
using kernels::PackedExpertSections;

constexpr int kMaxTokens = 256;

struct Options {
  std::string out = "moe_layer.json";
  int reps = 20;
  int layers = 4;
  std::string commit = "unknown";
  std::vector<int> comm_sms = {8, 16, 24, 32, 48};
  std::string model = "all";
  int only_tokens = 0;  // 0: the whole sweep
  bool ablations = false;
  // Also the overlapped body with the launch chains and L2's PDL switched apart, in pairs.
  bool overlapped_variants = false;
  // A comm partition is planned for a bucket only when it beats the sequential layer by this.
  double min_gain = 1.02;
  std::string plan_out;  // also write the chosen plans here
  // Back-to-back rounds (below): odd, so the median ratio is one round's.
  int rounds = 9;
};

// `clock`: the SM clock over each back-to-back comparison.
StatusOr<nlohmann::json> run_model(ModelShape const& m, Options const& options, double ceiling_gbps,
                                   cudaStream_t stream, GpuClockSampler& clock) {
  LayerTiming const timing{
      .reps = options.reps, .layers = options.layers, .rounds = options.rounds};
  PackedExpertSections const s = sections(m);
  // The routed experts, then the shared expert as expert m.experts — or, with MXFP4 routed
  // experts, the FP8 shared expert in a buffer of its own.
  bool const apart = m.format == kernels::ExpertWeightFormat::kMxfp4;
  PackedExpertSections const shared_s = kernels::fp8_expert_sections(m.hidden, m.inter);
  GCMOE_ASSIGN_OR_RETURN(
      auto experts, DeviceBuffer<std::uint8_t>::allocate((m.experts + (apart ? 0 : 1)) * s.stride));
  GCMOE_ASSIGN_OR_RETURN(auto shared_expert,
                         DeviceBuffer<std::uint8_t>::allocate(apart ? shared_s.stride : 1));
  GCMOE_ASSIGN_OR_RETURN(auto gate, DeviceBuffer<float>::allocate(m.experts * m.hidden));
  GCMOE_ASSIGN_OR_RETURN(auto bias, DeviceBuffer<float>::allocate(m.experts));
  GCMOE_ASSIGN_OR_RETURN(auto x, DeviceBuffer<float>::allocate(kMaxTokens * m.hidden));
  GCMOE_ASSIGN_OR_RETURN(auto out, DeviceBuffer<float>::allocate(kMaxTokens * m.hidden));
  if (apart) {
    GCMOE_RETURN_IF_ERROR(
        fill_mxfp4_experts(experts.data(), m.experts, s, m.hidden, m.inter, 11, stream));
    GCMOE_RETURN_IF_ERROR(fill_experts(shared_expert.data(), 1, shared_s, 12, stream));
  } else {
    GCMOE_RETURN_IF_ERROR(fill_experts(experts.data(), m.experts + 1, s, 11, stream));
  }
  GCMOE_RETURN_IF_ERROR(
      fill_random_floats(gate.data(), m.experts * m.hidden, -0.02f, 0.02f, 7, stream));
  GCMOE_RETURN_IF_ERROR(fill_random_floats(bias.data(), m.experts, -0.01f, 0.01f, 8, stream));
  GCMOE_RETURN_IF_ERROR(
      fill_random_floats(x.data(), kMaxTokens * m.hidden, -2.0f, 2.0f, 9, stream));
  GCMOE_CHECK_CUDA(cudaStreamSynchronize(stream));
  kernels::MoeLayerConfig const config = kernels::moe_layer_config(
      m.family, m.hidden, m.inter, m.experts, m.top_k, /*fp8_activations=*/true);
  // One operator per comm partition size (each its own pair of green contexts).
  // Ablations at the first comm size: without the L1→L2 overlap, and with each dispatch on its
  // GEMM's stream (no comm partition concurrency).
  std::vector<std::pair<std::string, std::unique_ptr<kernels::GcMoeLayer>>> ablations;
  if (options.ablations) {
    for (auto const& [name, gc_options] :
         {std::pair{std::string("no_pdl"),
                    kernels::GcMoeOptions{
                        .comm_sms = options.comm_sms[0], .overlap_down = false, .chain = false}},
          std::pair{
              std::string("dispatch_in_stream"),
              kernels::GcMoeOptions{.comm_sms = options.comm_sms[0], .dispatch_on_comm = false}}}) {
      GCMOE_ASSIGN_OR_RETURN(auto layer,
                             kernels::GcMoeLayer::create(config, kMaxTokens, 0, gc_options));
      ablations.emplace_back(name, std::make_unique<kernels::GcMoeLayer>(std::move(layer)));
    }
  }
  std::vector<std::unique_ptr<kernels::GcMoeLayer>> layers;
  std::vector<int> comm_sms;
  for (int const asked : options.comm_sms) {
    GCMOE_ASSIGN_OR_RETURN(auto layer,
                           kernels::GcMoeLayer::create(config, kMaxTokens, 0, {.comm_sms = asked}));
    comm_sms.push_back(layer.comm_sms(1));
    layers.push_back(std::make_unique<kernels::GcMoeLayer>(std::move(layer)));
  }
  // The GC-MoE body without partition at every bucket (GcPartitionStep::overlapped): the
  // plan's candidate where no split pays, timed in pairs with the sequential graph, with L2 by
  // PDL and plainly (the launch chains on in both).
  GCMOE_ASSIGN_OR_RETURN(auto const overlapped_plan,
                         kernels::GcPartitionPlan::create({{.max_tokens = 1, .overlapped = true}}));
  GCMOE_ASSIGN_OR_RETURN(
      auto overlapped_layer,
      kernels::GcMoeLayer::create(config, kMaxTokens, 0, {.plan = overlapped_plan}));
  GCMOE_ASSIGN_OR_RETURN(
      auto overlapped_plain_layer,
      kernels::GcMoeLayer::create(config, kMaxTokens, 0,
                                  {.plan = overlapped_plan, .overlap_down = false}));
  // Ablations of the overlapped body: without the launch chains (GcMoeOptions::chain).
  std::vector<std::pair<std::string, std::unique_ptr<kernels::GcMoeLayer>>> variants;
  if (options.overlapped_variants) {
    for (auto const& [name, chain, down] : {std::tuple{std::string("l2_pdl_only"), false, true},
                                            std::tuple{std::string("no_pdl"), false, false}}) {
      GCMOE_ASSIGN_OR_RETURN(auto layer,
                             kernels::GcMoeLayer::create(
                                 config, kMaxTokens, 0,
                                 {.plan = overlapped_plan, .overlap_down = down, .chain = chain}));
      variants.emplace_back(name, std::make_unique<kernels::GcMoeLayer>(std::move(layer)));
    }
  }
  double const expert_bytes = static_cast<double>(s.stride);
  double const shared_bytes = static_cast<double>(apart ? shared_s.stride : s.stride);
  double const router_bytes = 4.0 * m.experts * m.hidden;
  fmt::print("== {} (experts: {}), {:.2f} MB per routed expert, {:.2f} MB shared\n", m.name,
             m.expert_format, expert_bytes / 1e6, shared_bytes / 1e6);
  nlohmann::json points = nlohmann::json::array();
  nlohmann::json plans = nlohmann::json::object();
  for (bool const shared : {true, false}) {
    std::vector<kernels::GcPartitionMeasurement> measured;
    // Per measured point: the sequential layer at its faster placement of the shared expert (its
    // own launches only when it is packed apart), what every paired comparison runs against.
    struct Baseline {
      double us = 0.0;
      kernels::SharedExpertLaunch placement = kernels::SharedExpertLaunch::kWithRouted;
    };
    std::vector<Baseline> baselines;
    std::size_t const first_point = points.size();
    kernels::MoeLayerDeviceWeights const weights{
        .gate_weight = gate.data(),
        .bias = bias.data(),
        .experts = experts.data(),
        .sections = s,
        .has_shared = shared,
        .format = m.format,
        .shared_expert = apart ? shared_expert.data() : nullptr,
        .shared_sections = apart ? shared_s : PackedExpertSections{}};
    fmt::print("{} {:>4} {:>7} {:>9} {:>9}", shared ? "shared " : "routed ", "T", "experts",
               "floor_us", "seq_us");
    for (int const sms : comm_sms) {
      fmt::print(" {:>8}", fmt::format("gc{}_us", sms));
    }
    for (auto const& ablation : ablations) {
      fmt::print(" {:>18}", ablation.first);
    }
    fmt::print(" {:>22} {:>7} {:>8}\n", "overlapped_us(pairs)", "speedup", "of_floor");
    for (int const tokens : {1, 2, 4, 8, 16, 32, 64, 128, 256}) {
      if (options.only_tokens != 0 && tokens != options.only_tokens) {
        continue;
      }
      kernels::MoeLayerSequential& steps = layers.front()->steps();
      // (The shared expert in its own launches: the placement every weight format can run.)
      GCMOE_RETURN_IF_ERROR(steps.run(weights, x.data(), tokens, out.data(), stream,
                                      kernels::SharedExpertLaunch::kSeparate));
      GCMOE_ASSIGN_OR_RETURN(std::size_t const touched,
                             touched_experts(steps, tokens, m.top_k, stream));
      // The baseline at its best: the shared expert in the routed launches or in its own (only
      // the latter when it is packed apart).
      std::vector<double> seq_variants;
      for (auto const placement :
           {kernels::SharedExpertLaunch::kWithRouted, kernels::SharedExpertLaunch::kSeparate}) {
        if (!shared && placement == kernels::SharedExpertLaunch::kSeparate) {
          continue;
        }
        if (shared && apart && placement == kernels::SharedExpertLaunch::kWithRouted) {
          continue;
        }
        GCMOE_ASSIGN_OR_RETURN(cuda::Graph const sequential,
                               layers.front()->sequential_graph(weights, x.data(), out.data(),
                                                                tokens, stream, placement));
        GCMOE_ASSIGN_OR_RETURN(double const us, time_sequential(sequential, timing, stream));
        seq_variants.push_back(us);  // per layer
      }
      double const seq = *std::min_element(seq_variants.begin(), seq_variants.end());
      bool const separate_faster = shared && (apart || seq_variants.back() < seq_variants.front());
      Baseline const baseline{.us = seq,
                              .placement = separate_faster
                                               ? kernels::SharedExpertLaunch::kSeparate
                                               : kernels::SharedExpertLaunch::kWithRouted};
      baselines.push_back(baseline);
      // The overlapped body against the sequential graph in its faster placement, in pairs: L2
      // by PDL, then plainly.
      GCMOE_ASSIGN_OR_RETURN(
          PairedSummary const overlapped,
          time_back_to_back(overlapped_layer, *layers.front(), weights, x.data(), out.data(),
                            tokens, baseline.placement, timing, stream));
      GCMOE_ASSIGN_OR_RETURN(
          PairedSummary const overlapped_plain,
          time_back_to_back(overlapped_plain_layer, *layers.front(), weights, x.data(), out.data(),
                            tokens, baseline.placement, timing, stream));
      auto const print_overlapped = [&](std::string const& name, PairedSummary const& v) {
        fmt::print(
            "{} {:>4} overlapped {:<12} {:.1f} us {:.3f}x sequential ({:.3f}-{:.3f}, {}/{})\n",
            shared ? "shared " : "routed ", tokens, name, v.candidate_us, v.speedup, v.speedup_min,
            v.speedup_max, v.rounds_won, v.rounds);
      };
      nlohmann::json variant_points = nlohmann::json::object();
      for (auto& [name, layer] : variants) {
        GCMOE_ASSIGN_OR_RETURN(
            PairedSummary const v,
            time_back_to_back(*layer, *layers.front(), weights, x.data(), out.data(), tokens,
                              baseline.placement, timing, stream));
        variant_points[name] = paired_json(v);
        print_overlapped(name, v);
      }
      std::vector<double> gc_us;
      for (auto& layer : layers) {
        GCMOE_ASSIGN_OR_RETURN(
            double const us, time_gc_layer(*layer, weights, x.data(), out.data(), tokens, timing));
        gc_us.push_back(us);
      }
      double const bytes = static_cast<double>(touched) * expert_bytes +
                           (shared ? shared_bytes : 0.0) + router_bytes;
      double const floor_us = bytes / (ceiling_gbps * 1e9) * 1e6;
      std::size_t best = 0;
      for (std::size_t i = 1; i < gc_us.size(); ++i) {
        best = gc_us[i] < gc_us[best] ? i : best;
      }
      fmt::print("{} {:>4} {:>7} {:>9.1f} {:>9.1f}", shared ? "shared " : "routed ", tokens,
                 touched, floor_us, seq);
      nlohmann::json sweep = nlohmann::json::array();
      for (std::size_t i = 0; i < gc_us.size(); ++i) {
        fmt::print(" {:>8.1f}", gc_us[i]);
        sweep.push_back({{"comm_sms", comm_sms[i]},
                         {"compute_sms", layers[i]->compute_sms(tokens)},
                         {"time_us", gc_us[i]}});
      }
      nlohmann::json ablation_points = nlohmann::json::object();
      for (auto& [name, layer] : ablations) {
        GCMOE_ASSIGN_OR_RETURN(
            double const us, time_gc_layer(*layer, weights, x.data(), out.data(), tokens, timing));
        fmt::print(" {:>18.1f}", us);
        ablation_points[name] = us;
      }
      fmt::print(" {:>8.1f} {:.3f}x{:>2}{}/{} {:>6.2f}x {:>7.2f}x\n", overlapped.candidate_us,
                 overlapped.speedup, "", overlapped.rounds_won, options.rounds, seq / gc_us[best],
                 gc_us[best] / floor_us);
      print_overlapped("l2_plain", overlapped_plain);
      kernels::GcPartitionMeasurement sample{
          .tokens = tokens,
          .sequential_us = seq_variants.front(),
          .sequential_separate_us = shared ? seq_variants.back() : 0.0,
          .overlapped_us = overlapped.candidate_us,
          .overlapped_won_every_round = overlapped.won_every_round(),
          .overlapped_plain_us = overlapped_plain.candidate_us,
          .overlapped_plain_won_every_round = overlapped_plain.won_every_round()};
      // The fastest split, where its single timing beats the sequential layer by --min-gain, is
      // timed again in pairs with the sequential graph and stays a candidate (at its paired
      // time) only if it won every pair: single timings of identical graphs drift by up to 16%
      // under the power cap, and a split chosen on one of them lost 3-6% back to back
      // (bench/NOTES.md, "Plans from paired timings").
      nlohmann::json confirmation = nullptr;
      if (gc_us[best] * options.min_gain < seq) {
        GCMOE_ASSIGN_OR_RETURN(
            PairedSummary const split,
            time_back_to_back(*layers[best], *layers.front(), weights, x.data(), out.data(), tokens,
                              baseline.placement, timing, stream));
        bool const kept = split.won_every_round();
        if (kept) {
          sample.gc_us.emplace_back(comm_sms[best], split.candidate_us);
        }
        confirmation = paired_json(split);
        confirmation["comm_sms"] = comm_sms[best];
        confirmation["kept"] = kept;
        fmt::print("        split of {} SMs in pairs: {:.3f}x ({:.3f}-{:.3f}) -> {}\n",
                   comm_sms[best], split.speedup, split.speedup_min, split.speedup_max,
                   kept ? "kept" : "dropped");
      }
      measured.push_back(std::move(sample));
      points.push_back({{"shared_expert", shared},
                        {"tokens", tokens},
                        {"touched_experts", touched},
                        {"bytes", bytes},
                        {"floor_us", floor_us},
                        {"sequential_us", seq},
                        {"sequential_shared_with_routed_us", seq_variants.front()},
                        {"sequential_shared_separate_us", seq_variants.back()},
                        {"gc_moe", sweep},
                        {"split_in_pairs", confirmation},
                        {"overlapped_without_partition", paired_json(overlapped)},
                        {"overlapped_l2_plain", paired_json(overlapped_plain)},
                        {"overlapped_variants", variant_points},
                        {"gc_moe_best_us", gc_us[best]},
                        {"gc_moe_best_comm_sms", comm_sms[best]},
                        {"speedup_over_sequential", seq / gc_us[best]},
                        {"gc_moe_best_over_floor", gc_us[best] / floor_us},
                        {"ablations_at_first_comm_size", ablation_points}});
    }
    if (measured.empty()) {
      continue;
    }
    // The per-bucket plan this run's sweep picks (no partition where no size wins by
    // options.min_gain), then that plan's layer timed again at every point: its own
    // measurement, not the sweep's best.
    GCMOE_ASSIGN_OR_RETURN(auto const first_plan,
                           kernels::GcPartitionPlan::choose(measured, options.min_gain));
    // L2 by PDL or not: the first plan's GC-MoE graph at each such point without PDL against
    // itself with it, in pairs; PDL goes off where it lost every pair, and the plan is chosen
    // again.
    {
      GCMOE_ASSIGN_OR_RETURN(
          auto with_pdl, kernels::GcMoeLayer::create(config, kMaxTokens, 0, {.plan = first_plan}));
      GCMOE_ASSIGN_OR_RETURN(auto without_pdl, kernels::GcMoeLayer::create(
                                                   config, kMaxTokens, 0,
                                                   {.plan = first_plan, .overlap_down = false}));
      for (std::size_t i = 0; i < measured.size(); ++i) {
        int const tokens = measured[i].tokens;
        kernels::GcPartitionStep const& step = first_plan.step(tokens);
        if (step.comm_sms == 0 && !step.overlapped) {
          continue;  // the sequential graph: no PDL
        }
        if (!step.overlap_down) {
          // The overlapped body's plain candidate: already L2 after L1 in both layers, and
          // already timed against its PDL twin in pairs with the sequential graph.
          continue;
        }
        GCMOE_ASSIGN_OR_RETURN(
            PairedSummary const pdl,
            time_gc_pairs(without_pdl, with_pdl, weights, x.data(), out.data(), tokens, timing));
        measured[i].without_pdl_won_every_round = pdl.won_every_round();
        points[first_point + i]["l2_without_pdl_in_pairs"] =
            paired_json(pdl, "without_pdl", "with_pdl");
        fmt::print("{} {:>4} L2 without PDL in pairs: {:.3f}x ({:.3f}-{:.3f}, faster in {}/{})\n",
                   shared ? "shared " : "routed ", tokens, pdl.speedup, pdl.speedup_min,
                   pdl.speedup_max, pdl.rounds_won, pdl.rounds);
      }
    }
    GCMOE_ASSIGN_OR_RETURN(auto plan, kernels::GcPartitionPlan::choose(measured, options.min_gain));
    GCMOE_ASSIGN_OR_RETURN(auto planned,
                           kernels::GcMoeLayer::create(config, kMaxTokens, 0, {.plan = plan}));
    fmt::print("{} planned: {}\n", shared ? "shared " : "routed ",
               nlohmann::json::parse(plan.to_json())["steps"].dump());
    for (std::size_t i = 0; i < measured.size(); ++i) {
      int const tokens = measured[i].tokens;
      GCMOE_ASSIGN_OR_RETURN(double const per_layer,
                             time_gc_layer(planned, weights, x.data(), out.data(), tokens, timing));
      nlohmann::json& point = points[first_point + i];
      point["planned_comm_sms"] = planned.comm_sms(tokens);
      point["planned_overlap_down"] = plan.step(tokens).overlap_down;
      point["planned_us"] = per_layer;
      double const seq = baselines[i].us;
      point["planned_speedup_over_sequential"] = seq / per_layer;
      // The same comparison with both timed in turn (the ratio above compares timings taken at
      // different moments of the run), against the baseline's faster placement.
      clock.start();
      StatusOr<PairedSummary> const timed =
          time_back_to_back(planned, *layers.front(), weights, x.data(), out.data(), tokens,
                            baselines[i].placement, timing, stream);
      ClockStats const clocks = clock.stop();
      GCMOE_ASSIGN_OR_RETURN(PairedSummary const b2b, timed);
      // The SM clock over the rounds (the 700 W cap lowers it for the MXFP4 kernels:
      // bench/common/gpu_clock_sampler.h).
      point["back_to_back"] = {{"rounds", options.rounds},
                               {"order", "sequential first in even rounds, planned first in odd"},
                               {"planned_us", b2b.candidate_us},
                               {"sequential_us", b2b.baseline_us},
                               {"planned_speedup", b2b.speedup},
                               {"speedup_min", b2b.speedup_min},
                               {"speedup_max", b2b.speedup_max},
                               {"rounds_planned_faster", b2b.rounds_won},
                               {"round_speedups", b2b.speedups},
                               {"clock", clock_json(clocks)}};
      fmt::print(
          "{} {:>4} planned comm {:>3} SMs {:>9.1f} us  {:>5.2f}x sequential; back to back "
          "{:>9.1f} vs {:>9.1f} us: {:>5.3f}x ({:.3f}-{:.3f}, faster in {}/{}) at {:>4.0f} MHz\n",
          shared ? "shared " : "routed ", tokens, planned.comm_sms(tokens), per_layer,
          seq / per_layer, b2b.candidate_us, b2b.baseline_us, b2b.speedup, b2b.speedup_min,
          b2b.speedup_max, b2b.rounds_won, options.rounds, clocks.sm_mhz_mean);
    }
    plans[shared ? "with_shared_expert" : "routed_only"] = nlohmann::json::parse(plan.to_json());
  }
  return nlohmann::json{{"model", m.name},
                        {"partition_plans", plans},
                        {"shape",
                         {{"hidden", m.hidden},
                          {"intermediate", m.inter},
                          {"experts", m.experts},
                          {"top_k", m.top_k},
                          {"shared_intermediate", m.inter}}},
                        {"expert_format", m.expert_format},
                        {"bytes_per_expert", expert_bytes},
                        {"bytes_per_shared_expert", shared_bytes},
                        {"points", points}};
}

Status run(Options const& options) {
  cudaStream_t stream = nullptr;
  GCMOE_CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  GCMOE_ASSIGN_OR_RETURN(MemoryCeilings const ceilings, measure_memory_ceilings(stream));
  double const ceiling_gbps = ceilings.best();
  fmt::print("ceiling (SM read) {:.0f} GB/s; {} back-to-back layer replays per timing\n",
             ceiling_gbps, options.layers);
  GpuClockSampler clock;  // NVML opened once for the run
  nlohmann::json models = nlohmann::json::array();
  for (ModelShape const* m : {&kGlm52, &kDeepseekV41}) {
    if (options.model != "all" && options.model != m->name) {
      continue;
    }
    GCMOE_ASSIGN_OR_RETURN(nlohmann::json result,
                           run_model(*m, options, ceiling_gbps, stream, clock));
    models.push_back(std::move(result));
  }
  cudaDeviceProp prop{};
  GCMOE_CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  nlohmann::json const doc = {
      {"benchmark", "moe_layer"},
      {"ranks", 1},
      {"implementation",
       "GC-MoE one rank: route + align & sort + active list on the compute partition, then "
       "dispatch (comm partition, per-row epoch flags) concurrent with WGMMA v2.1 L1 (acquires "
       "the flags) and L2 (programmatic dependent launch), combine advances the epoch; "
       "sequential baseline: the same kernels on one stream over the whole device"},
      {"device", prop.name},
      {"commit", options.commit},
      {"ceiling_gbps", ceiling_gbps},
      {"layers_per_timing", options.layers},
      {"models", models}};
  std::ofstream(options.out) << doc.dump(2) << "\n";
  if (!options.plan_out.empty()) {
    nlohmann::json plans = {{"device", prop.name}, {"commit", options.commit}};
    for (nlohmann::json const& model : models) {
      plans[model["model"].get<std::string>()] = model["partition_plans"];
    }
    std::ofstream(options.plan_out) << plans.dump(2) << "\n";
  }
  GCMOE_CHECK_CUDA(cudaStreamDestroy(stream));
  return Status();
}

}  // namespace
}  // namespace gcmoe::bench

int main(int argc, char** argv) {
  gcmoe::bench::Options options;
  CLI::App app{"bench_moe_layer: GC-MoE vs the sequential baseline, one MoE layer on one GPU"};
  app.add_option("--out", options.out, "JSON output file");
  app.add_option("--reps", options.reps, "timed repetitions per point")
      ->check(CLI::Range(1, 10000));
  app.add_option("--layers", options.layers, "back-to-back layer replays per timing")
      ->check(CLI::Range(1, 64));
  app.add_option("--commit", options.commit, "commit the binary was built from");
  app.add_option("--comm", options.comm_sms, "comm partition sizes to sweep (SMs)")->delimiter(',');
  app.add_option("--model", options.model, "glm5.2, deepseek-v4.1 or all")
      ->check(CLI::IsMember({"glm5.2", "deepseek-v4.1", "all"}));
  app.add_option("--tokens", options.only_tokens, "only this T (0: the whole sweep)");
  app.add_flag("--ablations", options.ablations,
               "also time GC-MoE without PDL and without the comm partition's concurrency");
  app.add_flag("--overlapped-variants", options.overlapped_variants,
               "also time the overlapped body with the launch chains and L2's PDL apart");
  app.add_option("--min-gain", options.min_gain,
                 "plan a comm partition for a bucket only when it is this much faster (1.02)")
      ->check(CLI::Range(1.0, 2.0));
  app.add_option("--plan-out", options.plan_out, "write the chosen per-bucket partition plans");
  app.add_option("--rounds", options.rounds,
                 "back-to-back rounds, planned vs sequential in alternating order (odd)")
      ->check(CLI::Range(1, 99));
  CLI11_PARSE(app, argc, argv);
  gcmoe::Status const status = gcmoe::bench::run(options);
  if (!status.ok()) {
    std::fprintf(stderr, "bench_moe_layer: %s\n", status.to_string().c_str());
    return 1;
  }
  return 0;
}
