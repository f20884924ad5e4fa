#include <algorithm>
#include <climits>

#include "engine/common/cuda_check.h"
#include "engine/common/cuda_driver.h"
#include "kernels/hopper/pdl_launch.h"
#include "kernels/moe/expert_launch_sms.h"
#include "kernels/moe/expert_pass_policy.h"
#include "kernels/moe/expert_x_map.h"
#include "kernels/moe/mxfp4_expert_wgmma.h"
#include "kernels/moe/mxfp4_expert_wgmma_kernel.cuh"
#include "kernels/moe/mxfp4_expert_wgmma_layout.h"

namespace gcmoe::kernels {
namespace {

using mxfp4_wgmma::items_per_slot;
using mxfp4_wgmma::mxfp4_expert_wgmma_kernel;
using mxfp4_wgmma::stage_bytes;

// L1: 4 consumer warpgroups (128 outputs, one requantization group); L2: 2 (128 rows). A stage
// holds half the weight bytes of the FP8 kernel's, so more stages keep ~200 KB per SM in flight,
// except at 32 rows (v5.15): the consumers' loop is unrolled over the stages (one chunk body per
// stage, ~2.9 KB each), and with 10 (L1) or 8 (L2) stages the loop outgrew the instruction cache
// (ncu: "no instruction" stalls 0.15 -> 2.71 per issue at T=1). At 5 and 4 stages the 32-row
// kernels run 1.03-1.06x faster at one rank of eight T=128/256 than rolled at 10 and 8, and up to
// 4% slower at T=1, where no policy picks them (bench/NOTES.md, twenty-fifth session).
// Two feed warps (v5.1), one for the weight images and one for the x rows: one warp issuing both
// needed ~240 instructions per stage among 8 warps per scheduler and could not refill a stage as
// fast as the consumers freed it (8-row passes 1.10-1.36x faster with two, bench/NOTES.md v5.1).
// At 48 rows they sit in a warpgroup of four (two idle) that hands its registers to the consumers
// (setmaxnreg, FeedRegisters in feed_register_split.h): L1 104, L2 96 per consumer thread
// instead of the 96 and 80 of the launch.
template <int kN>
inline constexpr int kMxfp4FeedWarps = kN == 48 ? 4 : 2;
template <ExpertGemmStage kStage, int kN>
struct Config;
template <int kN>
struct Config<ExpertGemmStage::kGateUp, kN> {
  static constexpr int kWgs = 4;
  static constexpr int kMinBlocks = kN <= 16 ? 2 : 1;
  static constexpr int kStages = 5;
  static constexpr int kFeedWarps = kMxfp4FeedWarps<kN>;
};
template <int kN>
struct Config<ExpertGemmStage::kDown, kN> {
  static constexpr int kWgs = 2;
  static constexpr int kMinBlocks = kN <= 8 ? 4 : (kN <= 16 ? 3 : 2);
  static constexpr int kStages = kN <= 8 ? 5 : (kN <= 16 ? 6 : 4);
  static constexpr int kFeedWarps = kMxfp4FeedWarps<kN>;
};

// Every kernel loads x by TMA, so a launch must give x_rows (the map's bound). At 16 and 32 rows
// 1.04-1.42x over cp.async at one rank of eight (bench/NOTES.md v5.3); at 8 rows once the TMA
// kernels dropped the proxy fence that cp.async needs (v5.7: 1.01-1.12x at one GPU, 1.02-1.07x at
// one rank of eight). The cp.async kernels, run only by callers without x_rows (tests, a benchmark
// column), went with v5.14: the unrolled ring spilled in them.
template <ExpertGemmStage kStage, int kN, bool kPersistent = false>
constexpr auto kernel_for() {
  using C = Config<kStage, kN>;
  return mxfp4_expert_wgmma_kernel<kStage, C::kWgs, kN, C::kStages, C::kMinBlocks, C::kFeedWarps,
                                   kPersistent>;
}

// A configuration C's dynamic shared memory at kN rows per pass: its stages and their activation
// scales, plus 1024 bytes for the alignment.
template <typename C, int kN>
constexpr std::size_t smem_bytes() {
  return static_cast<std::size_t>(C::kStages) * (stage_bytes<C::kWgs, kN>() + kN * sizeof(float)) +
         1024;
}

template <typename C, int kN, typename Kernel>
cudaError_t raise_smem_limit(Kernel kernel) {
  // Per SM each CTA takes its dynamic + static shared memory + 1 KB reserved
  // (expert_pass_policy.h). Static: barriers, the window tables and the row factors, 896 B (L2)
  // to 1856 B (L1, 48 rows) by ptxas -v at version 6; bounded here by 2 KB.
  static_assert((smem_bytes<C, kN>() + kCtaReservedSharedBytes + 2048) * C::kMinBlocks <=
                kSmSharedBytes);
  static_assert(smem_bytes<C, kN>() <= kMaxExpertGemmDynamicSmem);
  // A configuration of more than one CTA per SM up to the most any launch asks for: one by PDL
  // may ask for more than its stages to spread its CTAs (launch_config); one CTA per SM never
  // spreads.
  constexpr bool kSpreads = C::kMinBlocks > 1;
  return cudaFuncSetAttribute(
      kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
      static_cast<int>(kSpreads ? kMaxExpertGemmDynamicSmem : smem_bytes<C, kN>()));
}

template <ExpertGemmStage kStage, int kN>
cudaError_t raise_smem_limits() {
  cudaError_t const classic = raise_smem_limit<Config<kStage, kN>, kN>(kernel_for<kStage, kN>());
  return classic != cudaSuccess
             ? classic
             : raise_smem_limit<Config<kStage, kN>, kN>(kernel_for<kStage, kN, true>());
}

// Words from an expert's scales to its tiles' row images (mxfp4_wgmma_row_image at tile 0; the
// kernel's tiles count 16 rows, the layout's 64).
int row_images_of(Fp8ExpertGemmArgs const& args) {
  return static_cast<int>(mxfp4_wgmma_row_image(args.tiles / 4, args.chunks, 0));
}

// One launch of configuration C's kernel over the tile groups (x: tile groups times passes side
// by side, y: the active list's slots); errors surface through GCMOE_CHECK_LAUNCH after it
// (cudaGetLastError).
template <typename C, int kN, typename Kernel, typename XMapParam>
void launch_config(Kernel kernel, int threads, Fp8ExpertGemmArgs const& args,
                   Mxfp4WgmmaTuning const& tuning, int passes, XMapParam const& x_map,
                   cudaStream_t stream) {
  dim3 const grid(static_cast<unsigned>(items_per_slot<C::kWgs>(args.tiles, passes)),
                  static_cast<unsigned>(args.max_active));
  std::size_t const smem =
      args.overlap_previous
          ? pdl_spread_smem_bytes(smem_bytes<C, kN>(), static_cast<int>(grid.x * grid.y),
                                  C::kMinBlocks, spread_sms_of(args))
          : smem_bytes<C, kN>();
  static_cast<void>(hopper::launch_with_pdl(
      kernel, grid, dim3(threads), smem, stream, args.overlap_previous, args, passes,
      tuning.stream_only ? 1 : 0, row_images_of(args), x_map));
}

// A persistent launch (Fp8ExpertGemmArgs::work_counters): one CTA per place the SMs (spread_sms,
// else the device's) have for the kernel at its stage memory, at most one per work item; each
// takes items until none is left (expert_work_queue.cuh).
template <typename C, int kN, typename Kernel, typename XMapParam>
Status launch_persistent(Kernel kernel, int threads, Fp8ExpertGemmArgs const& args,
                         Mxfp4WgmmaTuning const& tuning, int passes, XMapParam const& x_map,
                         cudaStream_t stream) {
  // Per process and kernel: the occupancy does not change between launches.
  static StatusOr<int> const per_sm = ctas_per_sm(kernel, threads, smem_bytes<C, kN>());
  GCMOE_RETURN_IF_ERROR(per_sm.status());
  int const sms = args.spread_sms > 0 ? args.spread_sms : device_sm_count();
  GCMOE_CHECK_ARG_MSG(*per_sm > 0 && sms > 0,
                      "mxfp4 expert wgmma: no SM holds a persistent CTA of this configuration");
  std::int64_t const items =
      static_cast<std::int64_t>(items_per_slot<C::kWgs>(args.tiles, passes)) * args.max_active;
  auto const ctas = static_cast<unsigned>(std::min<std::int64_t>(items, *per_sm * sms));
  static_cast<void>(hopper::launch_with_pdl(
      kernel, dim3(ctas), dim3(threads), smem_bytes<C, kN>(), stream, args.overlap_previous, args,
      passes, tuning.stream_only ? 1 : 0, row_images_of(args), x_map));
  return Status();
}

template <ExpertGemmStage kStage, int kN>
Status launch(Fp8ExpertGemmArgs const& args, Mxfp4WgmmaTuning const& tuning, int passes,
              cudaStream_t stream) {
  using C = Config<kStage, kN>;
  GCMOE_ASSIGN_OR_RETURN(auto const x_map, (expert_x_map<kN, true>(args)));
  int const threads = (C::kWgs * 4 + C::kFeedWarps) * 32;
  if (args.work_counters != nullptr) {
    return launch_persistent<C, kN>(kernel_for<kStage, kN, true>(), threads, args, tuning, passes,
                                    x_map, stream);
  }
  launch_config<C, kN>(kernel_for<kStage, kN>(), threads, args, tuning, passes, x_map, stream);
  return Status();
}

// The pass width and the passes side by side: expert_pass_policy.h, kMxfp4PassBands.
// tuning.pass_rows (tests, benchmark) forces a configuration.
template <ExpertGemmStage kStage>
Status launch_for_rows(Fp8ExpertGemmArgs const& args, Mxfp4WgmmaTuning const& tuning,
                       cudaStream_t stream) {
  // A forced configuration is a policy of one band: the same passes side by side for the hint.
  PassBand const forced[] = {{INT_MAX, tuning.pass_rows}};
  ExpertPasses p = tuning.pass_rows > 0
                       ? expert_passes_for(args.rows_per_expert_hint, forced)
                       : expert_passes_for(args.rows_per_expert_hint, kMxfp4PassBands);
  if (tuning.max_passes > 0) {
    p.passes = std::min(p.passes, tuning.max_passes);
  }
  if (p.rows == 8) {
    return launch<kStage, 8>(args, tuning, p.passes, stream);
  }
  if (p.rows == 16) {
    return launch<kStage, 16>(args, tuning, p.passes, stream);
  }
  if (p.rows == 32) {
    return launch<kStage, 32>(args, tuning, p.passes, stream);
  }
  return launch<kStage, 48>(args, tuning, p.passes, stream);
}

template <ExpertGemmStage kStage, int kN>
StatusOr<int> pdl_ctas_per_sm(int ctas, int sms) {
  using C = Config<kStage, kN>;
  return ctas_per_sm(kernel_for<kStage, kN>(), (C::kWgs * 4 + C::kFeedWarps) * 32,
                     pdl_spread_smem_bytes(smem_bytes<C, kN>(), ctas, C::kMinBlocks, sms));
}

}  // namespace

StatusOr<int> mxfp4_expert_wgmma_pdl_ctas_per_sm(ExpertGemmStage stage, int pass_rows, int ctas,
                                                 int sms) {
  return for_stage_and_width<8, 16, 32, 48>(
      stage, pass_rows,
      [&](auto s, auto n) {
        return pdl_ctas_per_sm<decltype(s)::value, decltype(n)::value>(ctas, sms);
      },
      "mxfp4 expert wgmma: pass rows must be 8, 16, 32 or 48");
}

Status preload_mxfp4_expert_wgmma() {
  GCMOE_CHECK_CUDA((raise_smem_limits<ExpertGemmStage::kGateUp, 8>()));
  GCMOE_CHECK_CUDA((raise_smem_limits<ExpertGemmStage::kGateUp, 16>()));
  GCMOE_CHECK_CUDA((raise_smem_limits<ExpertGemmStage::kGateUp, 32>()));
  GCMOE_CHECK_CUDA((raise_smem_limits<ExpertGemmStage::kGateUp, 48>()));
  GCMOE_CHECK_CUDA((raise_smem_limits<ExpertGemmStage::kDown, 8>()));
  GCMOE_CHECK_CUDA((raise_smem_limits<ExpertGemmStage::kDown, 16>()));
  GCMOE_CHECK_CUDA((raise_smem_limits<ExpertGemmStage::kDown, 32>()));
  GCMOE_CHECK_CUDA((raise_smem_limits<ExpertGemmStage::kDown, 48>()));
  return Status();
}

Status launch_mxfp4_expert_wgmma(Fp8ExpertGemmArgs const& args, cudaStream_t stream) {
  return launch_mxfp4_expert_wgmma(args, stream, Mxfp4WgmmaTuning{});
}

Status launch_mxfp4_expert_wgmma(Fp8ExpertGemmArgs const& args, cudaStream_t stream,
                                 Mxfp4WgmmaTuning const& tuning) {
  GCMOE_RETURN_IF_ERROR(check_expert_gemm_args(args));
  bool const gate_up = args.stage == ExpertGemmStage::kGateUp;
  GCMOE_CHECK_ARG_MSG(args.tiles > 0 && args.tiles % (gate_up ? 16 : 8) == 0,
                      "mxfp4 expert wgmma: I and H must be positive multiples of 128");
  GCMOE_CHECK_ARG_MSG(args.rows_per_expert_hint <= kExpertGemmMaxRowsHint,
                      "mxfp4 expert wgmma: bad hint");
  GCMOE_CHECK_ARG_MSG(mxfp4_wgmma_scale_words(args.tiles / 4, args.chunks) <= INT_MAX,
                      "mxfp4 expert wgmma: a projection's scales must have fewer than 2^31 words");
  GCMOE_CHECK_ARG_MSG(args.x_rows > 0,
                      "mxfp4 expert wgmma: x_rows must give the rows the x buffer holds (> 0): "
                      "the x rows come by TMA, bounded by it");
  // An option of the FP8 WGMMA version this kernel does not implement: refused, never ignored
  // (a fixed expert comes without offsets).
  GCMOE_CHECK_ARG_MSG(args.fixed_expert < 0,
                      "mxfp4 expert wgmma: fixed_expert is not supported (FP8 WGMMA version only)");
  GCMOE_CHECK_ARG_MSG(
      reinterpret_cast<std::uintptr_t>(args.weights) % 16 == 0 && args.weight_stride % 16 == 0 &&
          reinterpret_cast<std::uintptr_t>(args.weight_scales) % 16 == 0 &&
          args.scale_stride % 4 == 0,
      "mxfp4 expert wgmma: weights and scales must be 16-byte aligned (bulk copies)");
  // A forced configuration (tests, benchmark) must be one that exists: refused, never ignored.
  GCMOE_CHECK_ARG_MSG(tuning.max_passes >= 0 && tuning.max_passes <= kMaxParallelPasses,
                      "mxfp4 expert wgmma: max_passes must be 0 (no cap) to 8");
  GCMOE_CHECK_ARG_MSG(tuning.pass_rows == 0 || tuning.pass_rows == 8 || tuning.pass_rows == 16 ||
                          tuning.pass_rows == 32 || tuning.pass_rows == 48,
                      "mxfp4 expert wgmma: pass_rows must be 0 (the policy), 8, 16, 32 or 48");
  GCMOE_CHECK_ARG_MSG(!tuning.stream_only || args.rows_done == nullptr,
                      "mxfp4 expert wgmma: a stream-only launch writes no h, so it releases no "
                      "rows to L2");
  if (args.max_active <= 0) {
    return Status();
  }
  GCMOE_RETURN_IF_ERROR(gate_up ? launch_for_rows<ExpertGemmStage::kGateUp>(args, tuning, stream)
                                : launch_for_rows<ExpertGemmStage::kDown>(args, tuning, stream));
  GCMOE_CHECK_LAUNCH();
  return Status();
}

}  // namespace gcmoe::kernels
