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
// over the memory ceiling measured in the same run (MemoryCeilings::best: the fastest read stream).
//
// Per model and shared-expert setting, the sweep also times the GC-MoE body without a partition
// (the shared expert on a second stream, the small kernels in launch chains), with L2 overlapping
// L1 and with L2 after L1, each in --rounds pairs with the sequential graph, then picks a
// per-bucket partition plan (kernels/moe/gc_partition_plan.h: the fastest comm size where its
// single timing beats the sequential layer by --min-gain and it then won every pair with it, else
// the faster overlapped body that won every pair, else the sequential graph), then
// times that plan's GC-MoE graphs with and without L2 by programmatic dependent launch in pairs and
// turns PDL off in the buckets where it lost every pair (GcPartitionStep::overlap_down), times
// them with L2 acquiring L1's rows against L2 by PDL in pairs and turns that on where it won every
// pair (GcPartitionStep::down_by_rows), and times the planned layer again at every point, once
// alone and then in --rounds pairs with the faster sequential graph, the order alternating
// ("back_to_back": the median of the per-round ratios and their spread, with the SM clock over
// those rounds).
//
// Usage: bench_moe_layer [--out FILE] [--reps 20] [--layers 4] [--commit SHA] [--comm 8,16,...]
//                        [--model glm5.2|deepseek-v4.1|all] [--tokens N] [--min-gain 1.02]
//                        [--plan-out FILE] [--rounds 9] [--ablations] [--overlapped-variants]
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "bench/common/bench_exit.h"
#include "bench/common/gpu_clock_sampler.h"
#include "bench/common/gpu_timing.h"
#include "bench/common/moe_layer_weights.h"
#include "bench/moe/moe_layer_planned.h"
#include "bench/moe/moe_layer_point.h"
#include "bench/moe/moe_layer_rig.h"
#include "engine/common/check.h"
#include "engine/common/cuda_check.h"
#include "kernels/moe/gc_partition_plan.h"

namespace gcmoe::bench {
namespace {

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
  PointSettings const settings{
      .timing = {.reps = options.reps, .layers = options.layers, .rounds = options.rounds},
      .ceiling_gbps = ceiling_gbps,
      .min_gain = options.min_gain};
  GCMOE_ASSIGN_OR_RETURN(std::unique_ptr<LayerRig> rig,
                         make_layer_rig(m,
                                        {.comm_sms = options.comm_sms,
                                         .ablations = options.ablations,
                                         .overlapped_variants = options.overlapped_variants},
                                        stream));
  fmt::print("== {} (experts: {}), {:.2f} MB per routed expert, {:.2f} MB shared\n", m.name,
             m.expert_format, rig->expert_bytes() / 1e6, rig->shared_bytes() / 1e6);
  nlohmann::json points = nlohmann::json::array();
  nlohmann::json plans = nlohmann::json::object();
  for (bool const shared : {true, false}) {
    std::vector<kernels::GcPartitionMeasurement> measured;
    std::vector<SequentialBaseline> baselines;
    std::vector<nlohmann::json> model_points;
    print_point_header(*rig, shared);
    for (int const tokens : {1, 2, 4, 8, 16, 32, 64, 128, 256}) {
      if (options.only_tokens != 0 && tokens != options.only_tokens) {
        continue;
      }
      GCMOE_ASSIGN_OR_RETURN(MeasuredPoint point,
                             measure_point(*rig, shared, tokens, settings, stream));
      measured.push_back(std::move(point.measurement));
      baselines.push_back(point.baseline);
      model_points.push_back(std::move(point.json));
    }
    if (measured.empty()) {
      continue;
    }
    std::vector<nlohmann::json*> point_refs;
    for (nlohmann::json& point : model_points) {
      point_refs.push_back(&point);
    }
    GCMOE_ASSIGN_OR_RETURN(
        kernels::GcPartitionPlan const plan,
        plan_and_time(*rig, shared, measured, baselines, point_refs, settings, clock, stream));
    for (nlohmann::json& point : model_points) {
      points.push_back(std::move(point));
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
                        {"bytes_per_expert", rig->expert_bytes()},
                        {"bytes_per_shared_expert", rig->shared_bytes()},
                        {"points", points}};
}

Status run(Options const& options) {
  cudaStream_t stream = nullptr;
  GCMOE_CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  GCMOE_ASSIGN_OR_RETURN(MemoryCeilings const ceilings, measure_memory_ceilings(stream));
  double const ceiling_gbps = ceilings.best();
  fmt::print("ceiling (best read stream) {:.0f} GB/s; {} back-to-back layer replays per timing\n",
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
  return gcmoe::bench::exit_code("bench_moe_layer", gcmoe::bench::run(options));
}
