// bench_ep_multi_gpu: one expert-parallel MoE layer across the GPUs of one host (one rank per
// GPU, peer-mapped buffers, system-scope flags; kernels/moe/ep_moe_rank.h), GLM-5.2 shape (H 6144,
// I 2048, 256 experts, top-8, shared expert): GC-MoE (each rank's count exchange and dispatch on a
// comm green context, the shared expert beside the router, the GEMM acquiring rows as they land)
// against the sequential baseline (the same steps of each rank on one stream over its whole GPU),
// in the same run. Each mode is one CUDA graph per rank and parity, replayed `--reps` times on all
// ranks; the time is the host wall clock of the replays over their count (graphs are
// asynchronous; all ranks synchronized at the end). The floor: the most bytes any one GPU must
// read (its touched experts + the shared expert + the fp32 router) over the memory ceiling of GPU
// 0.
//
// Variants (`--variants`, default all): 0 the sequential baseline with the shared expert in
// launches of its own (the EP receive layout's default); 1 GC-MoE; 2 the sequential baseline with
// the shared expert's rows in the routed launch (faster on one stream at decode sizes); 3 the
// sequential baseline as issue 6 describes the standard pipeline: variant 0 with one receive
// buffer set, cleaned after the combine, and a barrier across ranks between replays
// (EpStepHandoff::kCleanAndBarrier); 4 (opt-in ablation, JSON only) GC-MoE with the shared
// expert's rows in the routed launch; 5 GC-MoE with each L2 acquiring its L1's rows
// (EpMoeRank::set_down_by_rows; "by_rows" is variant 1 over it, single timings, not in the plan).
// "speedup" is variant 1 over the fastest of 0, 2, 3 that ran; "vs_clean" over variant 3.
//
// Then, when variants 0 and 1 ran: the per-bucket plan those measurements pick (GC-MoE's split
// where it beats the faster double-buffered sequential placement by --min-gain, else the
// sequential graph; kernels/moe/gc_partition_plan.h), and that plan's layer (EpGcMoeLayer, one per
// GPU, its own symmetric regions, every bucket prepared once, then each timed) — its own
// measurement, not the sweep's best.
//
// Usage: bench_ep_multi_gpu [--out FILE] [--reps 50] [--commit SHA] [--comm 16] [--tokens 1,4,..]
//                           [--variants 0,1,2,3,5] [--timeout-ms 2000] [--min-gain 1.02]
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "bench/common/bench_exit.h"
#include "bench/common/device_fill.h"
#include "bench/common/gpu_timing.h"
#include "bench/common/moe_layer_weights.h"
#include "bench/moe/ep_multi_gpu_timing.h"
#include "engine/backends/cuda/device_buffer.h"
#include "engine/backends/cuda/graph.h"
#include "engine/backends/cuda/green_context.h"
#include "engine/backends/cuda/stream.h"
#include "engine/common/cuda_check.h"
#include "kernels/moe/ep_gc_moe_layer.h"
#include "kernels/moe/ep_moe_rank.h"

namespace gcmoe::bench {
namespace {

using cuda::DeviceBuffer;

struct Options {
  std::string out = "ep_multi_gpu.json";
  int reps = 50;
  std::string commit = "unknown";
  int comm_sms = 16;
  std::vector<int> tokens = {1, 2, 4, 8, 16, 32, 64, 128, 256};  // per rank
  // 0 sequential, 1 GC-MoE, 2 sequential with the shared expert fused, 3 sequential with a clean
  // pass and a barrier between replays, 5 GC-MoE with L2 by rows.
  std::vector<int> variants = {0, 1, 2, 3, 5};
  int timeout_ms = 2000;   // a rank's wait for a peer, before an error
  double min_gain = 1.02;  // the planned layer splits a bucket where GC-MoE wins by this much
};

Status run(Options const& options) {
  int devices = 0;
  GCMOE_CHECK_CUDA(cudaGetDeviceCount(&devices));
  if (devices < 2) {
    return Status(StatusCode::kFailedPrecondition, "bench_ep_multi_gpu needs 2 or more GPUs");
  }
  int const n = std::min(devices, 8);
  GCMOE_RETURN_IF_ERROR(enable_peers(n));
  ModelShape const& m = kGlm52;
  kernels::PackedExpertSections const sec = sections(m);
  std::int64_t const stride = sec.stride;
  int const local = m.experts / n;
  GCMOE_CHECK_CUDA(cudaSetDevice(0));
  cuda::Stream stream0;
  GCMOE_ASSIGN_OR_RETURN(stream0, cuda::Stream::create());
  GCMOE_ASSIGN_OR_RETURN(MemoryCeilings const ceilings, measure_memory_ceilings(stream0.get()));
  double const ceiling_gbps = ceilings.best();
  kernels::MoeLayerConfig const config = kernels::moe_layer_config(
      m.family, m.hidden, m.inter, m.experts, m.top_k, /*fp8_activations=*/true);
  std::vector<EpBenchGpu> gpus(static_cast<std::size_t>(n));
  std::vector<kernels::EpMoeRank> ranks;
  std::vector<int> rank_devices(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    rank_devices[static_cast<std::size_t>(r)] = r;
  }
  // One process driving every GPU: plain peer pointers (what NCCL's LSA pointers are).
  GCMOE_ASSIGN_OR_RETURN(
      auto memories,
      cuda::SymmetricMemory::allocate_local_group(
          kernels::EpMoeRank::symmetric_bytes(config, kEpBenchMaxTokensPerRank, n), rank_devices));
  for (int r = 0; r < n; ++r) {
    EpBenchGpu& g = gpus[static_cast<std::size_t>(r)];
    g.device = r;
    GCMOE_CHECK_CUDA(cudaSetDevice(r));
    GCMOE_ASSIGN_OR_RETURN(g.experts, DeviceBuffer<std::uint8_t>::allocate((local + 1) * stride));
    GCMOE_ASSIGN_OR_RETURN(g.gate, DeviceBuffer<float>::allocate(m.experts * m.hidden));
    GCMOE_ASSIGN_OR_RETURN(g.bias, DeviceBuffer<float>::allocate(m.experts));
    GCMOE_ASSIGN_OR_RETURN(g.x, DeviceBuffer<float>::allocate(kEpBenchMaxTokensPerRank * m.hidden));
    GCMOE_ASSIGN_OR_RETURN(g.out,
                           DeviceBuffer<float>::allocate(kEpBenchMaxTokensPerRank * m.hidden));
    // Each GPU's own experts; the router and its bias are the same everywhere (same seeds).
    GCMOE_RETURN_IF_ERROR(fill_experts(g.experts.data(), local + 1, sec, 11 + 1000 * r, nullptr));
    GCMOE_RETURN_IF_ERROR(
        fill_random_floats(g.gate.data(), m.experts * m.hidden, -0.02f, 0.02f, 7, nullptr));
    GCMOE_RETURN_IF_ERROR(fill_random_floats(g.bias.data(), m.experts, -0.01f, 0.01f, 8, nullptr));
    GCMOE_RETURN_IF_ERROR(fill_random_floats(g.x.data(), kEpBenchMaxTokensPerRank * m.hidden, -2.0f,
                                             2.0f, 9 + r, nullptr));
    g.weights = {.gate_weight = g.gate.data(),
                 .bias = g.bias.data(),
                 .experts = g.experts.data(),
                 .sections = sec,
                 .has_shared = true,
                 .shared_index = local};
    GCMOE_ASSIGN_OR_RETURN(g.partition, cuda::SmPartition::create(r, options.comm_sms));
    GCMOE_ASSIGN_OR_RETURN(g.plain, cuda::Stream::create());
    GCMOE_ASSIGN_OR_RETURN(g.fork, cuda::Event::create());
    GCMOE_ASSIGN_OR_RETURN(g.comm_done, cuda::Event::create());
    GCMOE_ASSIGN_OR_RETURN(g.side_done, cuda::Event::create());
    GCMOE_ASSIGN_OR_RETURN(
        auto rank, kernels::EpMoeRank::create(config, kEpBenchMaxTokensPerRank, n, r,
                                              std::move(memories[static_cast<std::size_t>(r)])));
    rank.set_timeout_ns(static_cast<std::uint64_t>(options.timeout_ms) * 1000000);
    ranks.push_back(std::move(rank));
    GCMOE_CHECK_CUDA(cudaDeviceSynchronize());
  }
  double const router_bytes = 4.0 * m.experts * m.hidden;
  fmt::print(
      "{} GPUs, GLM-5.2 shape, {} experts per GPU + shared; ceiling (GPU 0, SM read) {:.0f} "
      "GB/s; comm partition {} SMs\n",
      n, local, ceiling_gbps, gpus[0].partition.comm().sm_count());
  fmt::print("{:>7} {:>12} {:>9} {:>13} {:>13} {:>13} {:>9} {:>8} {:>8} {:>8} {:>8}\n", "T/rank",
             "max_touched", "floor_us", "seq_shared_us", "seq_fused_us", "seq_clean_us", "gc_us",
             "speedup", "vs_clean", "gc/floor", "by_rows");
  nlohmann::json points = nlohmann::json::array();
  std::vector<kernels::GcPartitionMeasurement> measured;
  for (int const tokens : options.tokens) {
    // 0: sequential, shared expert in its own launches; 1: GC-MoE; 2: sequential, shared expert
    // in the routed launch (the baseline's faster placement on one GPU at decode sizes).
    // 3: clean pass and barrier; 4: GC-MoE with the shared expert fused; 5: GC-MoE, L2 by rows.
    double us[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    for (int const gc : options.variants) {
      bool const split = gc == 1 || gc == 4 || gc == 5;  // the GC-MoE variants
      for (std::size_t r = 0; r < gpus.size(); ++r) {
        EpBenchGpu& g = gpus[r];
        GCMOE_CHECK_CUDA(cudaSetDevice(g.device));
        ranks[r].set_step_handoff(gc == 3 ? kernels::EpStepHandoff::kCleanAndBarrier
                                          : kernels::EpStepHandoff::kDoubleBuffered);
        ranks[r].set_down_by_rows(gc == 5);
        ranks[r].set_shared_expert_launch(gc == 2 || gc == 4
                                              ? kernels::SharedExpertLaunch::kWithRouted
                                              : kernels::SharedExpertLaunch::kSeparate);
        kernels::EpMoeRank::Streams streams;
        if (split) {
          streams.compute = reinterpret_cast<cudaStream_t>(g.partition.compute().stream());
          streams.comm = reinterpret_cast<cudaStream_t>(g.partition.comm().stream());
          streams.side = reinterpret_cast<cudaStream_t>(g.partition.compute().side_stream());
        } else {
          streams.compute = streams.comm = streams.side = g.plain.get();
        }
        streams.fork = g.fork.get();
        streams.comm_done = g.comm_done.get();
        streams.side_done = g.side_done.get();
        for (auto& graph : g.graphs) {
          GCMOE_ASSIGN_OR_RETURN(graph, cuda::Graph::capture(streams.compute, [&](cudaStream_t) {
                                   return ranks[r].enqueue_step(g.weights, g.x.data(), tokens,
                                                                g.out.data(), streams);
                                 }));
        }
      }
      auto timed = time_replays(gpus, ranks, options.reps, split);
      if (!timed.ok()) {
        char const* const names[] = {
            "sequential (shared separate)", "GC-MoE",
            "sequential (shared fused)",    "sequential (clean pass and barrier)",
            "GC-MoE (shared fused)",        "GC-MoE (L2 by rows)"};
        return Status(timed.status().code(), fmt::format("{} tokens per rank, {}: {}", tokens,
                                                         names[gc], timed.status().message()));
      }
      us[gc] = *timed;
    }
    // Touched experts per GPU from each rank's routing (its expert offsets over all E experts).
    std::vector<std::set<int>> touched(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
      GCMOE_CHECK_CUDA(cudaSetDevice(r));
      std::vector<std::int32_t> offsets(static_cast<std::size_t>(m.experts) + 1);
      GCMOE_CHECK_CUDA(cudaMemcpy(offsets.data(),
                                  ranks[static_cast<std::size_t>(r)].local().expert_offsets(),
                                  offsets.size() * 4, cudaMemcpyDeviceToHost));
      for (int e = 0; e < m.experts; ++e) {
        if (offsets[static_cast<std::size_t>(e) + 1] > offsets[static_cast<std::size_t>(e)]) {
          touched[static_cast<std::size_t>(e / local)].insert(e);
        }
      }
    }
    std::size_t max_touched = 0;
    for (auto const& t : touched) {
      max_touched = std::max(max_touched, t.size());
    }
    double const bytes = (static_cast<double>(max_touched) + 1.0) * stride + router_bytes;
    double const floor_us = bytes / (ceiling_gbps * 1e9) * 1e6;
    // The faster of the sequential placements that ran (0: not run).
    double sequential = 0.0;
    for (int const v : {0, 2, 3}) {
      if (us[v] > 0.0 && (sequential == 0.0 || us[v] < sequential)) {
        sequential = us[v];
      }
    }
    // Ratios over GC-MoE's time; 0 where a side did not run.
    auto const over_gc = [&](double t) { return us[1] > 0.0 ? t / us[1] : 0.0; };
    double const by_rows = us[5] > 0.0 && us[1] > 0.0 ? us[1] / us[5] : 0.0;
    fmt::print(
        "{:>7} {:>12} {:>9.1f} {:>13.1f} {:>13.1f} {:>13.1f} {:>9.1f} {:>7.2f}x {:>7.2f}x "
        "{:>7.2f}x {:>7.3f}x\n",
        tokens, max_touched, floor_us, us[0], us[2], us[3], us[1], over_gc(sequential),
        over_gc(us[3]), us[1] / floor_us, by_rows);
    points.push_back({{"tokens_per_rank", tokens},
                      {"max_touched_experts_per_gpu", max_touched},
                      {"floor_us", floor_us},
                      {"sequential_shared_separate_us", us[0]},
                      {"sequential_shared_fused_us", us[2]},
                      {"sequential_clean_barrier_us", us[3]},
                      {"gc_moe_shared_fused_us", us[4]},
                      {"gc_moe_by_rows_us", us[5]},
                      {"by_rows_speedup_over_gc_moe", by_rows},
                      {"sequential_us", sequential},
                      {"gc_moe_us", us[1]},
                      {"speedup_over_sequential", over_gc(sequential)},
                      {"speedup_over_clean_barrier", over_gc(us[3])},
                      {"gc_moe_over_floor", us[1] / floor_us}});
    if (us[0] > 0.0 && us[1] > 0.0) {
      // The sequential placements as the plan weighs them: shared expert fused (else separate).
      measured.push_back({.tokens = tokens,
                          .sequential_us = us[2] > 0.0 ? us[2] : us[0],
                          .sequential_separate_us = us[2] > 0.0 ? us[0] : 0.0,
                          .gc_us = {{gpus[0].partition.comm().sm_count(), us[1]}}});
    }
  }
  nlohmann::json plan_json = nullptr;
  if (!measured.empty() && measured.size() == options.tokens.size()) {
    GCMOE_ASSIGN_OR_RETURN(auto plan, kernels::GcPartitionPlan::choose(measured, options.min_gain));
    plan_json = nlohmann::json::parse(plan.to_json());
    fmt::print("planned: {}\n", plan_json["steps"].dump());
    GCMOE_ASSIGN_OR_RETURN(
        std::vector<double> const planned,
        time_planned(gpus, config, plan, options.tokens, options.reps, options.timeout_ms));
    for (std::size_t i = 0; i < planned.size(); ++i) {
      nlohmann::json& point = points[i];
      double const best = point["sequential_us"].get<double>();
      double const clean = point["sequential_clean_barrier_us"].get<double>();
      point["planned_comm_sms"] = plan.comm_sms(options.tokens[i]);
      point["planned_us"] = planned[i];
      point["planned_speedup_over_sequential"] = best / planned[i];
      point["planned_speedup_over_clean_barrier"] = clean > 0.0 ? clean / planned[i] : 0.0;
      fmt::print(
          "{:>7} planned comm {:>3} SMs {:>9.1f} us  {:>5.2f}x best sequential  {:>5.2f}x "
          "clean+barrier\n",
          options.tokens[i], plan.comm_sms(options.tokens[i]), planned[i], best / planned[i],
          clean > 0.0 ? clean / planned[i] : 0.0);
    }
  }
  cudaDeviceProp prop{};
  GCMOE_CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  nlohmann::json const doc = {{"benchmark", "ep_multi_gpu"},
                              {"gpus", n},
                              {"model_shape", "glm5.2"},
                              {"device", prop.name},
                              {"commit", options.commit},
                              {"ceiling_gbps", ceiling_gbps},
                              {"comm_sms", gpus[0].partition.comm().sm_count()},
                              {"reps", options.reps},
                              {"min_gain", options.min_gain},
                              {"partition_plan", plan_json},
                              {"points", points}};
  std::ofstream(options.out) << doc.dump(2) << "\n";
  return Status();
}

}  // namespace
}  // namespace gcmoe::bench

int main(int argc, char** argv) {
  gcmoe::bench::Options options;
  CLI::App app{"bench_ep_multi_gpu: GC-MoE vs the sequential baseline across the GPUs of a host"};
  app.add_option("--out", options.out, "JSON output file");
  app.add_option("--reps", options.reps, "replays per point")->check(CLI::Range(1, 100000));
  app.add_option("--commit", options.commit, "commit the binary was built from");
  app.add_option("--comm", options.comm_sms, "comm partition SMs")->check(CLI::Range(1, 64));
  app.add_option("--variants", options.variants,
                 "0 sequential (shared separate), 1 GC-MoE, 2 sequential (shared fused), "
                 "3 sequential (clean pass and barrier), 4 GC-MoE (shared fused; ablation), "
                 "5 GC-MoE (L2 by rows)")
      ->delimiter(',')
      ->check(CLI::Range(0, 5));
  app.add_option("--min-gain", options.min_gain, "the plan's threshold for a split (1.02: 2%)")
      ->check(CLI::Range(1.0, 2.0));
  app.add_option("--timeout-ms", options.timeout_ms, "a rank's wait for a peer (ms)")
      ->check(CLI::Range(1, 600000));
  app.add_option("--tokens", options.tokens, "tokens per rank (list)")
      ->delimiter(',')
      ->check(CLI::Range(1, gcmoe::bench::kEpBenchMaxTokensPerRank));
  CLI11_PARSE(app, argc, argv);
  return gcmoe::bench::exit_code("bench_ep_multi_gpu", gcmoe::bench::run(options));
}
