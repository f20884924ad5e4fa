#include <algorithm>
#include <climits>

#include "engine/common/cuda_check.h"
#include "kernels/hopper/pdl_launch.h"
#include "kernels/moe/expert_launch_sms.h"
#include "kernels/moe/expert_pass_policy.h"
#include "kernels/moe/expert_x_map.h"
#include "kernels/moe/fp8_expert_wgmma.h"
#include "kernels/moe/fp8_expert_wgmma_kernel.cuh"
#include "kernels/moe/fp8_expert_wgmma_wide.cuh"

namespace gcmoe::kernels {
namespace {

using fp8_wgmma::fp8_expert_wgmma_kernel;
using fp8_wgmma::fp8_expert_wgmma_wide_kernel;
using fp8_wgmma::stage_bytes;

// Configurations: L1 CTAs of 4 consumer warpgroups (128 outputs = one requantization group,
// 256 weight rows, 32 KB per stage), one per SM; L2 CTAs of 2 (128 hidden rows, 16 KB per
// stage), three per SM with 8 rows per pass. Stages fill ~200 KB of shared memory per SM.
// The wide configuration (64 rows per pass, v2.4) reads each weight tile once for up to 64 rows
// per expert: L1 at one CTA per SM (96 registers: a 32-register chunk accumulator and the
// 32-register sum; 5 stages of 40 KB), L2 at two per SM (91 registers, 4 stages of 24 KB).
// The 128-row configuration (v2.6) runs two 64-row halves on each weight stage, one after the
// other through one 32-register chunk accumulator beside the 64-register sum: L1 at one CTA per
// SM with 4 stages of 48 KB, L2 at two per SM with 3 stages of 32 KB.
// Measured slower (bench/NOTES.md, v2.4): an L2 prefetch of the next 4 or 8 chunks, 4-warpgroup
// L2 CTAs at one per SM, and one 128-row L2 pass (N=128 in one WGMMA, 160 registers) at one CTA
// per SM.
// Feed warps of the 8-32-row kernel: one issues the weight tiles, one the x rows and scales
// (one warp issuing both measured 0-4% slower; bench/NOTES.md "FP8 expert FFN" v2.9).
inline constexpr int kFp8FeedWarps = 2;

template <ExpertGemmStage kStage, int kN>
struct Config;
template <int kN>
struct Config<ExpertGemmStage::kGateUp, kN> {
  static constexpr int kWgs = 4;
  // Up to 16 rows: two CTAs of 3 stages per SM, so a step's L1 CTAs (16 per expert) fit one
  // wave for up to 16 experts (8 routed + the shared one at T=1) instead of 8, and two per-chunk
  // WGMMA chains run per SM (one CTA per SM left the 16-row config short of the HBM rate on
  // fewer SMs). 32 rows spill at the 60-register cap of two CTAs: one per SM.
  // 96 rows: 5 stages of 44 KB; 128 rows: 4 of 48 KB.
  static constexpr int kStages = kN <= 16 ? 3 : (kN <= 96 ? 5 : 4);
  static constexpr int kMinBlocks = kN <= 16 ? 2 : 1;
};
template <int kN>
struct Config<ExpertGemmStage::kDown, kN> {
  static constexpr int kWgs = 2;
  // Decode (8 rows): four CTAs of 3 stages per SM (48 per expert: 11 experts per wave).
  static constexpr int kStages = kN <= 8 ? 3 : (kN <= 64 ? 4 : 3);
  static constexpr int kMinBlocks = kN <= 8 ? 4 : (kN <= 16 ? 3 : 2);
};

// 64 to 128 rows per pass: the kernel without a producer warp (fp8_expert_wgmma_wide.cuh). Its
// stages are refilled two chunks late in L1, so the 4 warpgroups need not run in lockstep; L2
// (2 warpgroups, two CTAs per SM, 3–4 stages) keeps a lag of one.
template <ExpertGemmStage kStage>
inline constexpr int kWideLag = kStage == ExpertGemmStage::kGateUp ? 2 : 1;
template <int kN>
inline constexpr bool kWideKernel = kN >= 64;
// v2.7 (bench/NOTES.md): up to 96 rows per pass each k-step is one WGMMA over all of the pass's
// columns (the 2 KB weight fragment is read from shared memory once per k-step, not once per
// 64-column half), trimmed to the rows present in steps of 8; the 128-row pass keeps v2.6's
// halves one after the other (one 128-column chunk accumulator would take 64 registers).
template <int kN>
struct WideKnobs {
  static constexpr bool kSingle = kN <= 96;
  static constexpr int kStep = kSingle ? 8 : 16;
};

// kTmaX: x rows by TMA where the launch gives x_rows (bench/NOTES.md "FP8 expert FFN" v2.11 for
// the kernel with feed warps, v2.20 for the wide kernel's 96-row passes: 1.02-1.04x at one rank of
// eight T=256; the 64-row passes read 0-3% slower with it, and the 128-row passes with the map
// spill 108-136 bytes at their 128-register cap, so both keep cp.async).
template <int kN>
inline constexpr bool kWideTmaX = kN == 96;
template <ExpertGemmStage kStage, int kN, bool kTmaX = false>
constexpr auto kernel_for() {
  using C = Config<kStage, kN>;
  using K = WideKnobs<kN>;
  if constexpr (kWideKernel<kN>) {
    return fp8_expert_wgmma_wide_kernel<kStage, C::kWgs, kN, C::kStages, C::kMinBlocks,
                                        kWideLag<kStage>, K::kStep, K::kSingle, kTmaX>;
  } else {
    return fp8_expert_wgmma_kernel<kStage, C::kWgs, kN, C::kStages, C::kMinBlocks, kFp8FeedWarps,
                                   kTmaX>;
  }
}

// The weight images are grouped by a CTA's tiles (fp8_expert_wgmma_layout.h, v2.14), so a stage is
// one bulk copy: every configuration's kWgs must be its projection's group (checked in
// smem_bytes, which every launch and preload instantiates).
template <ExpertGemmStage kStage>
inline constexpr int kLayoutGroupTiles =
    kStage == ExpertGemmStage::kGateUp ? kWgmmaGateUpGroupTiles : kWgmmaDownGroupTiles;

template <ExpertGemmStage kStage, int kN>
constexpr std::size_t smem_bytes() {
  static_assert(Config<kStage, kN>::kWgs == kLayoutGroupTiles<kStage>,
                "a CTA's tiles must be one image group of the weight layout");
  using C = Config<kStage, kN>;
  // Stages, their scales, and up to 1024 bytes to align the first stage.
  return static_cast<std::size_t>(C::kStages) *
             (stage_bytes<C::kWgs, kN>() + (kN + 2 * C::kWgs) * sizeof(float)) +
         1024;
}

template <ExpertGemmStage kStage, int kN>
cudaError_t raise_smem_limit() {
  static_assert(smem_bytes<kStage, kN>() <= kMaxExpertGemmDynamicSmem);
  // A configuration of more than one CTA per SM up to the most any launch asks for: one by PDL
  // may ask for more than its stages to spread its CTAs (launch). One CTA per SM never spreads,
  // and the widest configurations' static part is over the 2 KB kMaxExpertGemmDynamicSmem leaves.
  constexpr bool kSpreads = Config<kStage, kN>::kMinBlocks > 1;
  int const bytes =
      static_cast<int>(kSpreads ? kMaxExpertGemmDynamicSmem : smem_bytes<kStage, kN>());
  cudaError_t const e = cudaFuncSetAttribute(kernel_for<kStage, kN>(),
                                             cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  if constexpr (!kWideKernel<kN> || kWideTmaX<kN>) {
    if (e == cudaSuccess) {
      return cudaFuncSetAttribute(kernel_for<kStage, kN, true>(),
                                  cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    }
  }
  return e;
}

// The most CTAs a K split may put on one (tile group, pass) in the kernel with feed warps: the
// cluster's partial sums ((splits - 1) · consumer threads · kN / 2 floats) go through CTA 0's
// stages (expert_split_k.cuh); 8 is the portable cluster size.
template <ExpertGemmStage kStage, int kN>
constexpr int max_k_splits() {
  using C = Config<kStage, kN>;
  constexpr int kScratchPerSplit = C::kWgs * 128 * (kN / 2) * static_cast<int>(sizeof(float));
  return std::min(8, 1 + C::kStages * stage_bytes<C::kWgs, kN>() / kScratchPerSplit);
}

// The K split of a launch: only for one fixed expert whose rows the passes side by side cover in
// one go (a split CTA runs one pass), in the kernel with feed warps; forced_k_splits > 0 forces it
// (tests and benchmarks), else expert_pass_policy.h's lone_expert_k_splits.
template <ExpertGemmStage kStage, int kN>
StatusOr<int> k_splits_for(Fp8ExpertGemmArgs const& args, int passes, int forced_k_splits) {
  bool const allowed = !kWideKernel<kN> && args.fixed_expert >= 0 && args.fixed_rows <= kN * passes;
  bool const by_policy = allowed && args.fixed_expert_alone;
  if (forced_k_splits > 0) {
    if constexpr (!kWideKernel<kN>) {
      GCMOE_CHECK_ARG_MSG(
          forced_k_splits == 1 || (allowed && forced_k_splits <= max_k_splits<kStage, kN>() &&
                                   forced_k_splits <= args.chunks),
          "fp8 expert wgmma: a K split needs one fixed expert whose rows fit one "
          "pass per CTA, at most as many splits as the scratch and the chunks allow");
    } else {
      GCMOE_CHECK_ARG_MSG(forced_k_splits == 1,
                          "fp8 expert wgmma: passes of 64 rows and more do not split K");
    }
    return forced_k_splits;
  }
  if constexpr (kWideKernel<kN>) {
    return 1;
  } else {
    if (!by_policy) {
      return 1;
    }
    int const ctas = args.tiles * kTileRows / kWgmmaTileRows / Config<kStage, kN>::kWgs * passes;
    return lone_expert_k_splits(ctas, args.chunks, device_sm_count(), max_k_splits<kStage, kN>());
  }
}

template <ExpertGemmStage kStage, int kN>
Status launch(Fp8ExpertGemmArgs const& args, int passes, int forced_k_splits, cudaStream_t stream) {
  constexpr int kWgs = Config<kStage, kN>::kWgs;
  int const tiles64 = args.tiles * kTileRows / kWgmmaTileRows;
  GCMOE_ASSIGN_OR_RETURN(int const k_splits,
                         (k_splits_for<kStage, kN>(args, passes, forced_k_splits)));
  dim3 const grid(static_cast<unsigned>(tiles64 / kWgs * passes * k_splits),
                  static_cast<unsigned>(args.max_active));
  std::size_t const smem =
      args.overlap_previous
          ? pdl_spread_smem_bytes(smem_bytes<kStage, kN>(), static_cast<int>(grid.x * grid.y),
                                  Config<kStage, kN>::kMinBlocks, spread_sms_of(args))
          : smem_bytes<kStage, kN>();
  if constexpr (kWideKernel<kN>) {
    dim3 const block(kWgs * 128);
    if constexpr (kWideTmaX<kN>) {
      if (args.x_rows > 0) {
        GCMOE_ASSIGN_OR_RETURN(auto const x_map, (expert_x_map<kN, true>(args)));
        GCMOE_CHECK_CUDA(hopper::launch_with_pdl(kernel_for<kStage, kN, true>(), grid, block, smem,
                                                 stream, args.overlap_previous, args, passes,
                                                 x_map));
        return Status();
      }
    }
    GCMOE_CHECK_CUDA(hopper::launch_with_pdl(kernel_for<kStage, kN, false>(), grid, block, smem,
                                             stream, args.overlap_previous, args, passes,
                                             NoXMap{}));
  } else {
    dim3 const block((kWgs * 4 + kFp8FeedWarps) * 32);
    auto const cluster = static_cast<unsigned>(k_splits);
    if (args.x_rows > 0) {
      GCMOE_ASSIGN_OR_RETURN(auto const x_map, (expert_x_map<kN, true>(args)));
      GCMOE_CHECK_CUDA(hopper::launch_with_pdl_in_clusters(
          kernel_for<kStage, kN, true>(), grid, block, smem, stream, args.overlap_previous, cluster,
          args, passes, k_splits, x_map));
    } else {
      GCMOE_CHECK_CUDA(hopper::launch_with_pdl_in_clusters(
          kernel_for<kStage, kN, false>(), grid, block, smem, stream, args.overlap_previous,
          cluster, args, passes, k_splits, NoXMap{}));
    }
  }
  return Status();
}

// The pass width and the passes side by side: expert_pass_policy.h, kFp8PassBands
// (kFp8LonePassBands for one fixed expert).
template <ExpertGemmStage kStage>
Status launch_for_rows(Fp8ExpertGemmArgs const& args, cudaStream_t stream,
                       Fp8WgmmaPasses const& forced) {
  // One expert alone (fixed_expert): its own bands, which spread it over more SMs.
  ExpertPasses p =
      expert_passes_for(args.rows_per_expert_hint,
                        args.fixed_expert >= 0 ? std::span<PassBand const>(kFp8LonePassBands)
                                               : std::span<PassBand const>(kFp8PassBands));
  if (forced.rows > 0) {
    // The forced width as a single band, so the passes follow the same rule as the policy's.
    PassBand const band[] = {{INT_MAX, forced.rows}};
    p = expert_passes_for(args.rows_per_expert_hint, band);
    p.passes = forced.passes > 0 ? forced.passes : p.passes;
  }
  int const k = forced.k_splits;
  if (p.rows == 8) {
    return launch<kStage, 8>(args, p.passes, k, stream);
  }
  if (p.rows == 16) {
    return launch<kStage, 16>(args, p.passes, k, stream);
  }
  if (p.rows == 64) {
    return launch<kStage, 64>(args, p.passes, k, stream);
  }
  if (p.rows == 96) {
    return launch<kStage, 96>(args, p.passes, k, stream);
  }
  return launch<kStage, 128>(args, p.passes, k, stream);
}

template <ExpertGemmStage kStage, int kN>
StatusOr<int> pdl_ctas_per_sm(int ctas, int sms) {
  using C = Config<kStage, kN>;
  constexpr bool kTmaX = !kWideKernel<kN> || kWideTmaX<kN>;  // what a launch with x_rows runs
  return ctas_per_sm(kernel_for<kStage, kN, kTmaX>(),
                     kWideKernel<kN> ? C::kWgs * 128 : (C::kWgs * 4 + kFp8FeedWarps) * 32,
                     pdl_spread_smem_bytes(smem_bytes<kStage, kN>(), ctas, C::kMinBlocks, sms));
}

}  // namespace

StatusOr<int> fp8_expert_wgmma_pdl_ctas_per_sm(ExpertGemmStage stage, int pass_rows, int ctas,
                                               int sms) {
  return for_stage_and_width<8, 16, 64, 96, 128>(
      stage, pass_rows,
      [&](auto s, auto n) {
        return pdl_ctas_per_sm<decltype(s)::value, decltype(n)::value>(ctas, sms);
      },
      "fp8 expert wgmma: pass rows must be 8, 16, 64, 96 or 128");
}

Status preload_fp8_expert_wgmma() {
  GCMOE_CHECK_CUDA((raise_smem_limit<ExpertGemmStage::kGateUp, 8>()));
  GCMOE_CHECK_CUDA((raise_smem_limit<ExpertGemmStage::kGateUp, 16>()));
  GCMOE_CHECK_CUDA((raise_smem_limit<ExpertGemmStage::kGateUp, 64>()));
  GCMOE_CHECK_CUDA((raise_smem_limit<ExpertGemmStage::kGateUp, 96>()));
  GCMOE_CHECK_CUDA((raise_smem_limit<ExpertGemmStage::kGateUp, 128>()));
  GCMOE_CHECK_CUDA((raise_smem_limit<ExpertGemmStage::kDown, 8>()));
  GCMOE_CHECK_CUDA((raise_smem_limit<ExpertGemmStage::kDown, 16>()));
  GCMOE_CHECK_CUDA((raise_smem_limit<ExpertGemmStage::kDown, 64>()));
  GCMOE_CHECK_CUDA((raise_smem_limit<ExpertGemmStage::kDown, 96>()));
  GCMOE_CHECK_CUDA((raise_smem_limit<ExpertGemmStage::kDown, 128>()));
  return Status();
}

Status launch_fp8_expert_wgmma(Fp8ExpertGemmArgs const& args, cudaStream_t stream) {
  return launch_fp8_expert_wgmma(args, stream, Fp8WgmmaPasses{});
}

Status launch_fp8_expert_wgmma(Fp8ExpertGemmArgs const& args, cudaStream_t stream,
                               Fp8WgmmaPasses const& forced) {
  GCMOE_RETURN_IF_ERROR(check_expert_gemm_args(args));
  GCMOE_CHECK_ARG_MSG(forced.rows == 0 || forced.rows == 8 || forced.rows == 16 ||
                          forced.rows == 64 || forced.rows == 96 || forced.rows == 128,
                      "fp8 expert wgmma: forced pass rows must be 8, 16, 64, 96 or 128");
  GCMOE_CHECK_ARG_MSG(forced.passes >= 0 && forced.passes <= kMaxParallelPasses,
                      "fp8 expert wgmma: forced passes side by side must be 0..8");
  GCMOE_CHECK_ARG_MSG(forced.k_splits >= 0 && forced.k_splits <= 8,
                      "fp8 expert wgmma: forced K splits must be 0..8");
  bool const gate_up = args.stage == ExpertGemmStage::kGateUp;
  // CTAs own 128 outputs (L1: 16 tiles of 8, one requantization group) or 128 rows (L2: 8 of 16).
  GCMOE_CHECK_ARG_MSG(args.tiles > 0 && args.tiles % (gate_up ? 16 : 8) == 0,
                      "fp8 expert wgmma: I and H must be positive multiples of 128");
  GCMOE_CHECK_ARG_MSG(args.rows_per_expert_hint <= kExpertGemmMaxRowsHint,
                      "fp8 expert wgmma: bad hint");
  GCMOE_CHECK_ARG_MSG(
      reinterpret_cast<std::uintptr_t>(args.weights) % 16 == 0 && args.weight_stride % 16 == 0,
      "fp8 expert wgmma: weights must be 16-byte aligned (bulk copies)");
  GCMOE_CHECK_ARG_MSG(args.work_counters == nullptr,
                      "fp8 expert wgmma: work_counters (persistent CTAs) is the MXFP4 kernel's "
                      "option");
  if (args.max_active <= 0) {
    return Status();
  }
  GCMOE_RETURN_IF_ERROR(gate_up ? launch_for_rows<ExpertGemmStage::kGateUp>(args, stream, forced)
                                : launch_for_rows<ExpertGemmStage::kDown>(args, stream, forced));
  GCMOE_CHECK_LAUNCH();
  return Status();
}

}  // namespace gcmoe::kernels
