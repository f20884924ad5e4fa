// bench_mxfp4_expert_ffn: the MXFP4 expert FFN (kernels/moe/mxfp4_expert_wgmma.h: L1 gate/up +
// SwiGLU clamp + routing weight + pow2 requantization, then L2 down) at DeepSeek-V4.1-Flash's
// shape (H 5120, I 2304, 384 experts, top-6), for T tokens per rank routed over all experts on
// one GPU ("ep1") and over one rank's eighth of them ("ep8_rank": T·8 tokens route globally, the
// rank keeps the pairs of its 48 experts). A column's time is the median over --rounds rounds (the
// columns' order reversed every other round, so the power cap's clock drop falls on all alike:
// bench/common/column_rounds.h) of each round's median graph replay over 4 independent routings,
// the pass width chosen for the layer's rows hint (routed_rows_hint: mean + 3·sqrt(mean)
// + 1, what the layer and the EP rank pass), the forced columns' side-by-side passes from it too;
// bytes are the touched experts' packed codes and scale images; the ceiling is the best
// memory rate measured in the same run (cudaMemcpy, SM copy, SM read-only stream).
// Kernel options: "mxfp4" (checkpoint-like scales; the default Mxfp4WgmmaTuning),
// "mxfp4_one_pass" (the policy's width, one pass per tile group: the experts with more rows loop),
// "mxfp4_feed16"/"mxfp4_feed32"/"mxfp4_feed48" (the kernel with feed warps forced at 16-, 32- or
// 48-row passes), "mxfp4_down_feed16"/"..32"/"..48" (the same for L2 alone, L1 as the default),
// "stream_only" (a probe: the consumers
// release every stage unread, so the kernel's own weight stream without decode or MMA; its outputs
// are not written), "mxfp4_pdl" (the default with L2 launched by programmatic dependent launch,
// as the GC-MoE layer runs the pair: L2 starts on the SMs L1's last wave leaves free),
// "mxfp4_pdl_untriggered" (L2 launched the same way but L1 never lets it start early: what the PDL
// launch costs or gains without the overlap), "mxfp4_pdl_packed" (mxfp4_pdl with L2's CTAs packed
// as the block scheduler places them, not spread over the SMs: Fp8ExpertGemmArgs::spread_sms),
// "mxfp4_pdl_rows" (mxfp4_pdl with the L1 -> L2 handshake by rows: L2 acquires each pass's rows
// once all of L1's tile groups have released them, instead of waiting for the whole L1 grid; a
// kernel after L2 zeroes the row counters, timed with the pair), "mxfp4_persistent" and
// "mxfp4_persistent_pdl" (the default and mxfp4_pdl with persistent CTAs taking work items from a
// counter: Fp8ExpertGemmArgs::work_counters), "mxfp4_pdl_l1_persistent" / "mxfp4_pdl_l2_persistent"
// (mxfp4_pdl with persistent CTAs in one of the two kernels), "stream_only_persistent" (the probe
// with persistent CTAs) and "mxfp4_again" (the default timed again, last in the list: how far
// identical launches in one run differ). A point's headline is the fastest of "mxfp4", "mxfp4_pdl",
// "mxfp4_pdl_rows" and the four persistent columns with outputs (best_kernel).
//
// Usage: bench_mxfp4_expert_ffn [--out FILE] [--reps 30] [--rounds 3] [--commit SHA] [--tokens N]
//                               [--scenario ep1|ep8_rank] [--pad-mib 0]
// --tokens N: only T = N (any N from 1 to 4096, not only the sweep's).
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/common/bench_exit.h"
#include "bench/common/column_bench_flags.h"
#include "bench/common/column_rounds.h"
#include "bench/common/gpu_clock_sampler.h"
#include "bench/common/gpu_timing.h"
#include "bench/moe/mxfp4_expert_ffn_columns.h"
#include "bench/moe/mxfp4_expert_ffn_data.h"
#include "engine/backends/cuda/device_buffer.h"
#include "engine/common/cuda_check.h"
#include "kernels/moe/mxfp4_expert_wgmma.h"
#include "kernels/moe/mxfp4_expert_wgmma_layout.h"

namespace gcmoe::bench {
namespace {

using cuda::DeviceBuffer;
using mxfp4_ffn::Batch;
using mxfp4_ffn::Kernel;
using mxfp4_ffn::kernel_name;
using mxfp4_ffn::kExperts;
using mxfp4_ffn::kHidden;
using mxfp4_ffn::kInter;
using mxfp4_ffn::kTopK;
using mxfp4_ffn::launch_ffn;
using mxfp4_ffn::make_batch;
using mxfp4_ffn::make_weights;
using mxfp4_ffn::Weights;

constexpr int kRanks = 8;
constexpr int kRotations = 4;

struct Options {
  std::string out = "mxfp4_expert_ffn.json";
  int reps = 30;
  std::string commit = "unknown";
  int only_tokens = 0;
  std::string only_scenario;
  // MiB allocated (and held) before the weights and batches: moves every later buffer, to test
  // whether the times depend on where the buffers lie (bench/NOTES.md v5.4: identical kernels
  // differed by 5-6% between binaries and between two layers' graphs).
  int pad_mib = 0;
  int rounds = 3;  // each column timed once per round (column_rounds.h)
};

Status run(Options const& options) {
  cudaStream_t stream = nullptr;
  GCMOE_CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  GCMOE_RETURN_IF_ERROR(kernels::preload_mxfp4_expert_wgmma());
  GCMOE_ASSIGN_OR_RETURN(MemoryCeilings const ceilings, measure_memory_ceilings(stream));
  double const copy_gbps = ceilings.best();
  GCMOE_ASSIGN_OR_RETURN(auto const pad, DeviceBuffer<std::uint8_t>::allocate(
                                             static_cast<std::size_t>(options.pad_mib) << 20 | 1));
  GCMOE_ASSIGN_OR_RETURN(Weights const weights, make_weights(stream));
  // The mxfp4_pdl_rows column's handshake, for every batch's rows (at most T·top-k per rank).
  GCMOE_ASSIGN_OR_RETURN(kernels::ExpertRowsHandshake const rows_handshake,
                         kernels::ExpertRowsHandshake::create(1 << 14, stream));
  // The persistent columns' work counters (L1's two, then L2's), zero between launches.
  GCMOE_ASSIGN_OR_RETURN(auto work_counters, DeviceBuffer<int>::allocate(4));
  GCMOE_RETURN_IF_ERROR(work_counters.fill_bytes(0));
  fmt::print("ceilings: {}; {:.2f} MB per expert (MXFP4 codes + scale images)\n",
             ceilings_summary(ceilings), weights.bytes_per_expert() / 1e6);

  nlohmann::json points = nlohmann::json::array();
  GpuClockSampler clock;  // the SM clock and power each timing ran at
  fmt::print("{:<9} {:>4} {:>6} {:>7} {:>23} {:>10} {:>9} {:>10} {:>8} {:>6} {:>5}\n", "scenario",
             "T", "rows", "experts", "kernel", "time_us", "GB/s", "floor_us", "of_copy", "sm_MHz",
             "capped");
  for (char const* scenario : {"ep1", "ep8_rank"}) {
    bool const ep1 = std::strcmp(scenario, "ep1") == 0;
    if (!options.only_scenario.empty() && options.only_scenario != scenario) {
      continue;
    }
    // The sweep, or the one token count --tokens names (any, to map a band's edge).
    std::vector<int> const sweep = options.only_tokens != 0
                                       ? std::vector<int>{options.only_tokens}
                                       : std::vector<int>{1, 2, 4, 8, 16, 32, 64, 128, 256};
    for (int const tokens : sweep) {
      int const global = ep1 ? tokens : tokens * kRanks;
      int const local = ep1 ? kExperts : kExperts / kRanks;
      std::vector<Batch> batches;
      double active_sum = 0.0;
      int rows_sum = 0;
      int max_rows = 0;
      for (int r = 0; r < kRotations; ++r) {
        GCMOE_ASSIGN_OR_RETURN(Batch b, make_batch(global, local, 1000 * tokens + r, stream));
        active_sum += b.active;
        rows_sum += b.rows;
        max_rows = std::max(max_rows, b.max_rows_per_expert);
        batches.push_back(std::move(b));
      }
      GCMOE_CHECK_CUDA(cudaStreamSynchronize(stream));
      double const experts = active_sum / kRotations;
      nlohmann::json per_kernel = nlohmann::json::object();
      // The columns in rounds, the order reversed every other round (bench/common/column_rounds.h:
      // the power cap lowers the clock within a point).
      Kernel const columns[] = {Kernel::kMxfp4,
                                Kernel::kOnePass,
                                Kernel::kNarrow16,
                                Kernel::kNarrow32,
                                Kernel::kNarrow48,
                                Kernel::kDownNarrow16,
                                Kernel::kDownNarrow32,
                                Kernel::kDownNarrow48,
                                Kernel::kStreamOnly,
                                Kernel::kPdl,
                                Kernel::kPdlUntriggered,
                                Kernel::kPdlPacked,
                                Kernel::kPdlRows,
                                Kernel::kPersistent,
                                Kernel::kPersistentPdl,
                                Kernel::kStreamOnlyPersistent,
                                Kernel::kPdlL1Persistent,
                                Kernel::kPdlL2Persistent,
                                Kernel::kAgain};
      GCMOE_ASSIGN_OR_RETURN(
          std::vector<ColumnRounds> const timed,
          time_in_rounds(std::ssize(columns), options.rounds, [&](int c) {
            return time_graph_sampled(clock, stream, options.reps, kRotations, [&]() -> Status {
              for (Batch const& b : batches) {
                GCMOE_RETURN_IF_ERROR(launch_ffn(columns[c], weights, b, rows_handshake,
                                                 work_counters.data(), stream));
              }
              return Status();
            });
          }));
      GCMOE_RETURN_IF_ERROR(rows_handshake.check(stream));
      for (std::size_t c = 0; c < std::size(columns); ++c) {
        Kernel const kernel = columns[c];
        double const us = timed[c].median_us();
        ClockStats const& clocks = timed[c].clock;
        double const bytes = experts * weights.bytes_per_expert();
        double const gbps = bytes / (us * 1e-6) / 1e9;
        double const floor_us = bytes / (copy_gbps * 1e9) * 1e6;
        fmt::print(
            "{:<9} {:>4} {:>6.1f} {:>7.1f} {:>23} {:>10.1f} {:>9.0f} {:>10.1f} {:>7.0f}% {:>6.0f} "
            "{:>4.0f}%\n",
            scenario, tokens, rows_sum / static_cast<double>(kRotations), experts,
            kernel_name(kernel), us, gbps, floor_us, 100.0 * gbps / copy_gbps, clocks.sm_mhz_mean,
            100.0 * clocks.power_capped);
        per_kernel[kernel_name(kernel)] = {{"time_us", us},
                                           {"weight_bytes", bytes},
                                           {"weight_gbps", gbps},
                                           {"floor_us", floor_us},
                                           {"fraction_of_copy", gbps / copy_gbps},
                                           {"round_us", timed[c].round_us},
                                           {"clock", clock_json(clocks)}};
      }
      char const* best_kernel = "mxfp4";
      for (char const* const candidate :
           {"mxfp4_pdl", "mxfp4_pdl_rows", "mxfp4_persistent", "mxfp4_persistent_pdl",
            "mxfp4_pdl_l1_persistent", "mxfp4_pdl_l2_persistent"}) {
        if (per_kernel[candidate]["time_us"].get<double>() <
            per_kernel[best_kernel]["time_us"].get<double>()) {
          best_kernel = candidate;
        }
      }
      nlohmann::json point = per_kernel[best_kernel];
      point["best_kernel"] = best_kernel;
      point["scenario"] = scenario;
      point["tokens_per_rank"] = tokens;
      point["rows"] = rows_sum / static_cast<double>(kRotations);
      point["active_experts"] = experts;
      point["rows_hint"] = batches.front().rows_hint;
      point["max_rows_per_expert"] = max_rows;
      point["kernels"] = per_kernel;
      points.push_back(point);
    }
  }
  cudaDeviceProp prop{};
  GCMOE_CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  nlohmann::json const doc = {
      {"benchmark", "mxfp4_expert_ffn"},
      {"kernels",
       {{"mxfp4",
         "mxfp4_expert_wgmma v6.1 (e2m1 decoded in registers to e4m3 by byte permutes through a "
         "table per row and k-step that holds the block's exponent relative to the row's "
         "largest, checkpoint-like scales: every tile windowed; a chunk's four register-A WGMMA "
         "m64nNk32 chained into one accumulator (above 16 columns all four decoded first, then "
         "issued back to back), folded once with the tokens' scales, the row's "
         "base once per pass; swap-AB, bulk-copy mbarrier pipeline; a stage's "
         "weight and x parts under one full and one empty barrier, released after the MMA "
         "(v5.10); two feed warps "
         "(v5.1); packed images in tile-group order (v5.2); pass width by the layer's rows hint "
         "(routed_rows_hint), kernels/moe/expert_pass_policy.h: one 8-row pass up to 12, one "
         "16-row pass up to 24 (v5.5), one 32-row pass up to 44 (v5.8), one 48-row pass up to 72 "
         "and 48-row passes side by side beyond (v5.16: a feed warpgroup hands its registers to "
         "the consumers by setmaxnreg); x rows by a TMA tensor copy at every width (v5.3, v5.7: "
         "8 rows), no proxy fence with it (v5.6); a pass with fewer rows than its width runs its "
         "WGMMA, fold and token scales at the rows rounded up to a multiple of 8 (v5.8); the L1 "
         "epilogue's scale once "
         "per column, shared with the FP8 kernels (v5.9); the 16-row L1 with one WGMMA in flight, "
         "no local memory (v5.13); at 8 and 16 rows each pass's ring from stage 0 and the chunk "
         "loop unrolled over the stages, its descriptors and addresses constants (v5.14); at 32 "
         "rows too, at 5 (L1) and 4 (L2) stages (v5.15))"},
        {"mxfp4_again",
         "the default once more, timed last (its own graph): identical launches' spread in one "
         "run"},
        {"mxfp4_one_pass",
         "the policy's pass width with one pass per tile group (experts with more rows loop)"},
        {"mxfp4_feed16",
         "the kernel with feed warps forced at 16-row passes (ceil(hint / 16) side by side)"},
        {"mxfp4_feed32",
         "the kernel with feed warps forced at 32-row passes (ceil(hint / 32) side by side)"},
        {"mxfp4_feed48",
         "the kernel with feed warps forced at 48-row passes (a feed warpgroup that hands its "
         "registers to the consumers by setmaxnreg; ceil(hint / 48) side by side)"},
        {"mxfp4_down_feed48",
         "L1 as the default, L2 (down) forced at 48-row passes (ceil(hint / 48) side by side)"},
        {"mxfp4_down_feed16",
         "L1 as the default, L2 (down) forced at 16-row passes (ceil(hint / 16) side by side)"},
        {"mxfp4_down_feed32",
         "L1 as the default, L2 (down) forced at 32-row passes (ceil(hint / 32) side by side)"},
        {"stream_only", "probe: the consumers release every stage unread (no decode or MMA)"},
        {"mxfp4_pdl",
         "the default with L2 launched by programmatic dependent launch (griddepcontrol), as the "
         "GC-MoE layer launches the pair: L2 starts on the SMs L1's last wave leaves free, streams "
         "its first weight stages and waits for L1 before reading h; a grid smaller than its full "
         "packing spread over the SMs"},
        {"mxfp4_pdl_untriggered", "mxfp4_pdl without L1's early trigger: the PDL launch alone"},
        {"mxfp4_pdl_packed",
         "ablation: mxfp4_pdl with L2 packed as the block scheduler places it (spread_sms -1)"},
        {"mxfp4_pdl_rows",
         "mxfp4_pdl with the L1 -> L2 handshake by rows (Fp8ExpertGemmArgs::rows_done): each of "
         "an L1 pass's tile groups counts its rows done and L2 acquires each pass's rows once all "
         "have, instead of waiting for the whole L1 grid; a kernel zeroes the handshake's row "
         "counters after L2 "
         "(timed with the pair)"},
        {"mxfp4_persistent",
         "the default with persistent CTAs (Fp8ExpertGemmArgs::work_counters, twenty-seventh "
         "session): one CTA per SM slot, each taking (expert, tile group, pass) items from a "
         "counter until none is left, its stage ring carried from item to item"},
        {"mxfp4_persistent_pdl",
         "mxfp4_persistent with L2 launched by PDL (L1's CTAs let it launch once the items are "
         "all taken)"},
        {"stream_only_persistent", "stream_only with persistent CTAs"},
        {"mxfp4_pdl_l1_persistent", "mxfp4_pdl with persistent CTAs in L1 only"},
        {"mxfp4_pdl_l2_persistent", "mxfp4_pdl with persistent CTAs in L2 only"}}},
      {"model_shape",
       {{"hidden", kHidden}, {"intermediate", kInter}, {"experts", kExperts}, {"top_k", kTopK}}},
      {"device", prop.name},
      {"commit", options.commit},
      {"pad_mib", options.pad_mib},
      {"copy_gbps", copy_gbps},
      {"ceilings_gbps", ceilings_json(ceilings)},
      {"rotations", kRotations},
      {"rounds", options.rounds},
      {"reps_per_round", options.reps},
      {"points", points}};
  std::ofstream(options.out) << doc.dump(2) << "\n";
  GCMOE_CHECK_CUDA(cudaStreamDestroy(stream));
  return Status();
}

}  // namespace
}  // namespace gcmoe::bench

int main(int argc, char** argv) {
  gcmoe::bench::Options options;
  CLI::App app{"bench_mxfp4_expert_ffn: the MXFP4 expert FFN against the copy ceiling"};
  gcmoe::bench::add_column_bench_flags(app, options.out, options.reps, options.rounds,
                                       options.commit);
  app.add_option("--tokens", options.only_tokens,
                 "only this T, any of 1..4096 (default: the sweep)")
      ->check(CLI::Range(1, 4096));
  app.add_option("--scenario", options.only_scenario, "only ep1 or ep8_rank (default: both)")
      ->check(CLI::IsMember({"ep1", "ep8_rank"}));
  app.add_option("--pad-mib", options.pad_mib,
                 "MiB held before the weights and batches (moves every later buffer)")
      ->check(CLI::Range(0, 65536));
  CLI11_PARSE(app, argc, argv);
  return gcmoe::bench::exit_code("bench_mxfp4_expert_ffn", gcmoe::bench::run(options));
}
