// bench_expert_ffn: the FP8 expert FFN, both versions (kernels/moe/fp8_expert_gemm.h on
// mma.sync and kernels/moe/fp8_expert_wgmma.h on WGMMA; L1 gate/up + SwiGLU + requantization, then
// L2 down) at GLM-5.2's shape (H 6144, I 2048, 256 experts, top-8), for T
// tokens per rank routed over all experts on one GPU ("ep1") and over one rank's eighth of them
// ("ep8_rank": T·8 tokens route globally, the rank keeps the pairs of its 32 experts). A column's
// time is the median over --rounds rounds (the columns' order reversed every other round, so the
// power cap's clock drop falls on all alike: bench/common/column_rounds.h) of each round's median
// graph replay; bytes are the touched experts' packed weights and scales; the ceiling is the
// best memory rate measured in the same run (cudaMemcpy, SM copy, SM read-only stream). The
// kernel's configuration hint is each batch's true largest rows-per-expert (known here because
// the routing is drawn on the host; the engine will take it from the previous step or a T bucket).
// The torch peers are bench/moe/expert_ffn_torch.py.
//
// Columns: mma_sync, wgmma (L1 then L2, each launch waiting for the previous one) and wgmma_pdl
// (the same kernels with L2 launched by programmatic dependent launch, as the GC-MoE layer runs
// them, MoeLayerSync::overlap_down: L2's CTAs take the SMs L1's last wave leaves free and stream
// their first weight stages before waiting for L1 to finish), and wgmma_pdl_packed (an ablation:
// wgmma_pdl with L2's CTAs packed as the block scheduler places them, not spread over the SMs,
// Fp8ExpertGemmArgs::spread_sms). A point's headline is its fastest column but the ablation
// (best_kernel).
//
// Usage: bench_expert_ffn [--out FILE] [--reps 30] [--rounds 3] [--commit SHA] [--tokens N]
//                         [--scenario ep1|ep8_rank] [--hint N]
// --tokens N: only T = N, one of the sweep's (1, 2, 4, ..., 256; 0: the whole sweep).
// --hint N replaces each batch's true largest rows-per-expert as the kernels' configuration hint
// (ablations: e.g. --tokens 256 --hint 128 runs the 128-row configuration where 96 would be
// picked; the JSON records it as rows_hint_override).
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/common/bench_exit.h"
#include "bench/common/column_bench_flags.h"
#include "bench/common/column_rounds.h"
#include "bench/common/device_fill.h"
#include "bench/common/expert_batch.h"
#include "bench/common/gpu_clock_sampler.h"
#include "bench/common/gpu_timing.h"
#include "engine/backends/cuda/device_buffer.h"
#include "engine/common/cuda_check.h"
#include "kernels/moe/expert_rows_handshake.h"
#include "kernels/moe/fp8_expert_gemm.h"
#include "kernels/moe/fp8_expert_layout.h"
#include "kernels/moe/fp8_expert_wgmma.h"
#include "kernels/moe/fp8_expert_wgmma_layout.h"

namespace gcmoe::bench {
namespace {

using cuda::DeviceBuffer;
using kernels::Fp8ExpertGemmArgs;

constexpr std::int64_t kHidden = 6144;
constexpr std::int64_t kInter = 2048;
constexpr int kExperts = 256;
constexpr int kTopK = 8;
constexpr int kRanks = 8;
// Independent routings replayed in turn, so one replay does not find the last one's experts in L2.
constexpr int kRotations = 4;
// Tokens per rank; --tokens picks one of them.
constexpr int kTokenSweep[] = {1, 2, 4, 8, 16, 32, 64, 128, 256};

struct Options {
  std::string out = "expert_ffn.json";
  int reps = 30;
  std::string commit = "unknown";
  int only_tokens = 0;        // 0: the whole sweep; N: only T = N (profiling runs)
  std::string only_scenario;  // empty: both; "ep1" or "ep8_rank" (profiling runs)
  int hint = 0;               // 0: each batch's largest rows per expert; N: N for every batch
  int rounds = 3;             // each column timed once per round (column_rounds.h)
};

enum class Kernel { kMmaSync, kWgmma, kWgmmaPdl, kWgmmaPdlPacked, kWgmmaPdlRows };

char const* kernel_name(Kernel kernel) {
  switch (kernel) {
    case Kernel::kMmaSync:
      return "mma_sync";
    case Kernel::kWgmma:
      return "wgmma";
    case Kernel::kWgmmaPdl:
      return "wgmma_pdl";
    case Kernel::kWgmmaPdlPacked:
      return "wgmma_pdl_packed";
    case Kernel::kWgmmaPdlRows:
      return "wgmma_pdl_rows";
  }
  return "?";
}

// Both versions stream the same bytes per expert in a different order; the random weights serve
// both (only the scale count differs: per 16-row tile for mma.sync, per 64-row tile for WGMMA).
struct Weights {
  int experts = 0;
  DeviceBuffer<std::uint8_t> l1, l2;
  DeviceBuffer<float> l1_scales, l2_scales;
  std::int64_t l1_tiles = kInter / 8, l2_tiles = kHidden / kernels::kTileRows;
  std::int64_t l1_chunks = kHidden / kernels::kChunkK, l2_chunks = kInter / kernels::kChunkK;
  std::int64_t l1_stride() const { return l1_tiles * l1_chunks * kernels::kChunkBytes; }
  std::int64_t l2_stride() const { return l2_tiles * l2_chunks * kernels::kChunkBytes; }
  std::int64_t l1_scale_stride() const { return l1_tiles * l1_chunks * 2; }
  std::int64_t l2_scale_stride() const { return l2_tiles * l2_chunks * 2; }
  std::int64_t scale_stride(Kernel kernel, std::int64_t stride) const {
    return kernel == Kernel::kMmaSync ? stride : stride / 4;
  }
  double bytes_per_expert(Kernel kernel) const {
    return static_cast<double>(l1_stride() + l2_stride()) +
           4.0 * static_cast<double>(scale_stride(kernel, l1_scale_stride()) +
                                     scale_stride(kernel, l2_scale_stride()));
  }
};

StatusOr<Weights> make_weights(int experts, cudaStream_t stream) {
  Weights w;
  w.experts = experts;
  GCMOE_ASSIGN_OR_RETURN(w.l1, DeviceBuffer<std::uint8_t>::allocate(experts * w.l1_stride()));
  GCMOE_ASSIGN_OR_RETURN(w.l2, DeviceBuffer<std::uint8_t>::allocate(experts * w.l2_stride()));
  GCMOE_ASSIGN_OR_RETURN(w.l1_scales, DeviceBuffer<float>::allocate(experts * w.l1_scale_stride()));
  GCMOE_ASSIGN_OR_RETURN(w.l2_scales, DeviceBuffer<float>::allocate(experts * w.l2_scale_stride()));
  GCMOE_RETURN_IF_ERROR(
      fill_random_e4m3(w.l1.data(), static_cast<std::int64_t>(w.l1.size()), 1, stream));
  GCMOE_RETURN_IF_ERROR(
      fill_random_e4m3(w.l2.data(), static_cast<std::int64_t>(w.l2.size()), 2, stream));
  // Scales of a std-0.02 weight block quantized to FP8: amax ≈ 0.1 → scale_inv ≈ 2e-4.
  GCMOE_RETURN_IF_ERROR(fill_random_floats(
      w.l1_scales.data(), static_cast<std::int64_t>(w.l1_scales.size()), 1e-4f, 3e-4f, 3, stream));
  GCMOE_RETURN_IF_ERROR(fill_random_floats(
      w.l2_scales.data(), static_cast<std::int64_t>(w.l2_scales.size()), 1e-4f, 3e-4f, 4, stream));
  GCMOE_CHECK_CUDA(cudaStreamSynchronize(stream));
  return w;
}

// One routed batch on the device, rows grouped by expert.
using Batch = ExpertBatch;

// `global_tokens` tokens each pick top-8 distinct experts of 256; pairs on experts >= `local`
// belong to other ranks and are dropped.
StatusOr<Batch> make_batch(int global_tokens, int local, std::uint64_t seed, cudaStream_t stream) {
  return make_expert_batch({.global_tokens = global_tokens,
                            .local = local,
                            .experts = kExperts,
                            .top_k = kTopK,
                            .hidden = kHidden,
                            .inter = kInter},
                           seed, stream);
}

// rows: the L1 -> L2 handshake by rows of the wgmma_pdl_rows column (ignored by the others).
Status launch_ffn(Kernel kernel, Weights const& w, Batch const& b, int rows_hint,
                  kernels::ExpertRowsHandshake const& rows, cudaStream_t stream) {
  auto const launch = [&](Fp8ExpertGemmArgs const& args) {
    return kernel == Kernel::kMmaSync ? kernels::launch_fp8_expert_gemm(args, stream)
                                      : kernels::launch_fp8_expert_wgmma(args, stream);
  };
  Fp8ExpertGemmArgs a;
  a.stage = kernels::ExpertGemmStage::kGateUp;
  a.weights = w.l1.data();
  a.weight_scales = w.l1_scales.data();
  a.weight_stride = w.l1_stride();
  a.scale_stride = w.scale_stride(kernel, w.l1_scale_stride());
  a.tiles = static_cast<int>(w.l1_tiles);
  a.chunks = static_cast<int>(w.l1_chunks);
  a.x = b.x.data();
  a.x_scales = b.x_scales.data();
  // The x rows the buffer holds, as the layer gives them: the WGMMA kernel with feed warps then
  // loads x by TMA (the mma.sync version ignores it).
  a.x_rows = std::max(b.rows, 1);
  a.expert_offsets = b.offsets.data();
  a.active_experts = b.active_experts.data();
  a.num_active = b.num_active.data();
  a.max_active = b.active;
  a.rows_per_expert_hint = rows_hint;
  a.h = b.h.data();
  a.h_scales = b.h_scales.data();
  bool const by_rows = kernel == Kernel::kWgmmaPdlRows;
  bool const pdl = kernel == Kernel::kWgmmaPdl || kernel == Kernel::kWgmmaPdlPacked || by_rows;
  a.allow_overlap_next = pdl;
  Fp8ExpertGemmArgs d = a;
  d.stage = kernels::ExpertGemmStage::kDown;
  d.weights = w.l2.data();
  d.weight_scales = w.l2_scales.data();
  d.weight_stride = w.l2_stride();
  d.scale_stride = w.scale_stride(kernel, w.l2_scale_stride());
  d.tiles = static_cast<int>(w.l2_tiles);
  d.chunks = static_cast<int>(w.l2_chunks);
  d.x = b.h.data();
  d.x_scales = b.h_scales.data();
  d.y = b.y.data();
  d.allow_overlap_next = false;
  d.overlap_previous = pdl;
  d.spread_sms = kernel == Kernel::kWgmmaPdlPacked ? -1 : 0;
  if (by_rows) {
    GCMOE_RETURN_IF_ERROR(rows.apply(a, d, b.rows));
  }
  GCMOE_RETURN_IF_ERROR(launch(a));
  GCMOE_RETURN_IF_ERROR(launch(d));
  return by_rows ? rows.finish(stream) : Status();
}

Status run(Options const& options) {
  cudaStream_t stream = nullptr;
  GCMOE_CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  GCMOE_RETURN_IF_ERROR(kernels::preload_fp8_expert_gemm());
  GCMOE_RETURN_IF_ERROR(kernels::preload_fp8_expert_wgmma());
  GCMOE_ASSIGN_OR_RETURN(MemoryCeilings const ceilings, measure_memory_ceilings(stream));
  double const copy_gbps = ceilings.best();
  GCMOE_ASSIGN_OR_RETURN(Weights const weights, make_weights(kExperts, stream));
  // The wgmma_pdl_rows column's handshake, for every batch's rows (at most T·top-k per rank).
  GCMOE_ASSIGN_OR_RETURN(kernels::ExpertRowsHandshake const rows_handshake,
                         kernels::ExpertRowsHandshake::create(1 << 14, stream));
  fmt::print("ceilings: {}; {:.2f} MB per expert (FP8 + scales)\n", ceilings_summary(ceilings),
             weights.bytes_per_expert(Kernel::kMmaSync) / 1e6);

  nlohmann::json points = nlohmann::json::array();
  GpuClockSampler clock;  // the SM clock and power each timing ran at
  fmt::print("{:<9} {:>4} {:>6} {:>7} {:>9} {:>10} {:>9} {:>10} {:>8} {:>6} {:>5}\n", "scenario",
             "T", "rows", "experts", "kernel", "time_us", "GB/s", "floor_us", "of_copy", "sm_MHz",
             "capped");
  for (char const* scenario : {"ep1", "ep8_rank"}) {
    bool const ep1 = std::strcmp(scenario, "ep1") == 0;
    if (!options.only_scenario.empty() && options.only_scenario != scenario) {
      continue;
    }
    for (int const tokens : kTokenSweep) {
      if (options.only_tokens != 0 && tokens != options.only_tokens) {
        continue;
      }
      int const global = ep1 ? tokens : tokens * kRanks;
      int const local = ep1 ? kExperts : kExperts / kRanks;
      std::vector<Batch> batches;
      double active_sum = 0.0;
      int rows_sum = 0;
      for (int r = 0; r < kRotations; ++r) {
        GCMOE_ASSIGN_OR_RETURN(Batch b, make_batch(global, local, 1000 * tokens + r, stream));
        active_sum += b.active;
        rows_sum += b.rows;
        batches.push_back(std::move(b));
      }
      GCMOE_CHECK_CUDA(cudaStreamSynchronize(stream));
      double const experts = active_sum / kRotations;
      nlohmann::json per_kernel = nlohmann::json::object();
      double best_us = 0.0;
      std::string best_kernel;
      // The columns in rounds, the order reversed every other round (bench/common/column_rounds.h:
      // the power cap lowers the clock within a point).
      Kernel const columns[] = {Kernel::kMmaSync, Kernel::kWgmma, Kernel::kWgmmaPdl,
                                Kernel::kWgmmaPdlPacked, Kernel::kWgmmaPdlRows};
      GCMOE_ASSIGN_OR_RETURN(
          std::vector<ColumnRounds> const timed,
          time_in_rounds(std::ssize(columns), options.rounds, [&](int c) {
            return time_graph_sampled(clock, stream, options.reps, kRotations, [&]() -> Status {
              for (Batch const& b : batches) {
                GCMOE_RETURN_IF_ERROR(launch_ffn(
                    columns[c], weights, b, options.hint > 0 ? options.hint : b.max_rows_per_expert,
                    rows_handshake, stream));
              }
              return Status();
            });
          }));
      GCMOE_RETURN_IF_ERROR(rows_handshake.check(stream));
      for (std::size_t c = 0; c < std::size(columns); ++c) {
        Kernel const kernel = columns[c];
        char const* const name = kernel_name(kernel);
        double const us = timed[c].median_us();
        ClockStats const& clocks = timed[c].clock;
        double const bytes = experts * weights.bytes_per_expert(kernel);
        double const gbps = bytes / (us * 1e-6) / 1e9;
        double const floor_us = bytes / (copy_gbps * 1e9) * 1e6;
        fmt::print(
            "{:<9} {:>4} {:>6.1f} {:>7.1f} {:>9} {:>10.1f} {:>9.0f} {:>10.1f} {:>7.0f}% {:>6.0f} "
            "{:>4.0f}%\n",
            scenario, tokens, rows_sum / static_cast<double>(kRotations), experts, name, us, gbps,
            floor_us, 100.0 * gbps / copy_gbps, clocks.sm_mhz_mean, 100.0 * clocks.power_capped);
        per_kernel[name] = {{"time_us", us},
                            {"weight_bytes", bytes},
                            {"weight_gbps", gbps},
                            {"floor_us", floor_us},
                            {"fraction_of_copy", gbps / copy_gbps},
                            {"round_us", timed[c].round_us},
                            {"clock", clock_json(clocks)}};
        if (kernel != Kernel::kWgmmaPdlPacked && (best_kernel.empty() || us < best_us)) {
          best_us = us;
          best_kernel = name;
        }
      }
      nlohmann::json point = per_kernel[best_kernel];
      point["scenario"] = scenario;
      point["tokens_per_rank"] = tokens;
      point["rows"] = rows_sum / static_cast<double>(kRotations);
      point["active_experts"] = experts;
      point["best_kernel"] = best_kernel;
      point["kernels"] = per_kernel;
      points.push_back(point);
    }
  }
  cudaDeviceProp prop{};
  GCMOE_CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  nlohmann::json const doc = {
      {"benchmark", "expert_ffn"},
      {"kernels",
       {{"mma_sync", "fp8_expert_gemm v1.4 (mma.sync m16n8k32 e4m3, swap-AB, cp.async rings)"},
        {"wgmma",
         "fp8_expert_wgmma v2.18 (WGMMA m64nNk32 e4m3, swap-AB, bulk-copy mbarrier "
         "pipeline; 8/16-row passes for hints <= 32 with two feed warps, x by TMA (v2.11); 64-, "
         "96- and 128-row passes beyond without them: up to 96 rows one WGMMA per k-step with N "
         "trimmed to the rows present in steps of 8, 128 rows as two 64-row halves per weight "
         "stage; the L1 epilogue's scale once per column (v2.12); stage cursor and descriptors "
         "by increment (v2.13); one bulk copy per stage (v2.14); no local-memory spills (v2.16); "
         "paired activation-scale loads at 96 rows (v2.17); L2 folds one weight scale per column "
         "(v2.18))"},
        {"wgmma_pdl",
         "the wgmma kernels with L2 launched by programmatic dependent launch (griddepcontrol), as "
         "the GC-MoE layer launches them: L2 starts on the SMs L1's last wave leaves free, "
         "streams its first weight stages and waits for L1 before reading h; a grid smaller than "
         "its full packing spread over the SMs"},
        {"wgmma_pdl_packed",
         "ablation: wgmma_pdl with L2 packed as the block scheduler places it (spread_sms -1)"},
        {"wgmma_pdl_rows",
         "wgmma_pdl with the L1 -> L2 handshake by rows (Fp8ExpertGemmArgs::rows_done): each of "
         "an L1 pass's tile groups counts its rows done and L2 acquires each pass's rows once all "
         "have, instead of waiting for the whole L1 grid, so its first CTAs run in the SMs L1's "
         "last wave "
         "leaves idle; a kernel zeroes the handshake's row counters after L2 (timed with "
         "the pair)"}}},
      {"model_shape",
       {{"hidden", kHidden}, {"intermediate", kInter}, {"experts", kExperts}, {"top_k", kTopK}}},
      {"device", prop.name},
      {"commit", options.commit},
      {"copy_gbps", copy_gbps},
      {"ceilings_gbps", ceilings_json(ceilings)},
      {"rotations", kRotations},
      {"rounds", options.rounds},
      {"reps_per_round", options.reps},
      {"rows_hint_override", options.hint},
      {"points", points}};
  std::ofstream(options.out) << doc.dump(2) << "\n";
  GCMOE_CHECK_CUDA(cudaStreamDestroy(stream));
  return Status();
}

}  // namespace
}  // namespace gcmoe::bench

int main(int argc, char** argv) {
  gcmoe::bench::Options options;
  CLI::App app{"bench_expert_ffn: the FP8 expert FFN (mma.sync, WGMMA) against the copy ceiling"};
  gcmoe::bench::add_column_bench_flags(app, options.out, options.reps, options.rounds,
                                       options.commit);
  gcmoe::bench::add_sweep_tokens_flag(app, options.only_tokens, gcmoe::bench::kTokenSweep);
  app.add_option("--scenario", options.only_scenario, "only ep1 or ep8_rank (default: both)")
      ->check(CLI::IsMember({"ep1", "ep8_rank"}));
  app.add_option("--hint", options.hint,
                 "rows-per-expert hint for every batch (0: each batch's largest rows per expert)")
      ->check(CLI::Range(0, gcmoe::kernels::kExpertGemmMaxRowsHint));
  CLI11_PARSE(app, argc, argv);
  return gcmoe::bench::exit_code("bench_expert_ffn", gcmoe::bench::run(options));
}
