// The expert GEMMs' pass policy (kernels/moe/expert_pass_policy.h): the width by the hint's band,
// passes enough to cover the hint up to the cap, for the FP8 and MXFP4 bands.
#include "kernels/moe/expert_pass_policy.h"

#include <algorithm>

#include "kernels/moe/expert_rows_hint.h"
#include "tests/support/catch.h"

namespace gcmoe::kernels {
namespace {

struct Want {
  int hint, rows, passes;
};

void check_bands(std::span<PassBand const> bands, std::initializer_list<Want> wants) {
  for (Want const w : wants) {
    ExpertPasses const p = expert_passes_for(w.hint, bands);
    INFO("hint " << w.hint);
    CHECK(p.rows == w.rows);
    CHECK(p.passes == w.passes);
  }
}

TEST_CASE(
    "Expert pass policy, MXFP4: one 8-row pass up to 12 rows, one 16-row pass up to 24, one 32-row "
    "pass up to 44, one 48-row pass up to 72, then 48-row passes side by side") {
  check_bands(kMxfp4PassBands,
              {{-3, 8, 1},  {0, 8, 1},   {1, 8, 1},   {8, 8, 1},    {9, 8, 1},      {12, 8, 1},
               {13, 16, 1}, {16, 16, 1}, {17, 16, 1}, {24, 16, 1},  {25, 32, 1},    {32, 32, 1},
               {33, 32, 1}, {44, 32, 1}, {45, 48, 1}, {48, 48, 1},  {49, 48, 1},    {72, 48, 1},
               {73, 48, 2}, {96, 48, 2}, {97, 48, 3}, {384, 48, 8}, {100000, 48, 8}});
}

TEST_CASE("Expert pass policy, FP8: 8 rows up to 8, 16 up to 32, 64, 96, then 128") {
  check_bands(kFp8PassBands, {{1, 8, 1},
                              {8, 8, 1},
                              {9, 16, 1},
                              {17, 16, 2},
                              {32, 16, 2},
                              {33, 64, 1},
                              {64, 64, 1},
                              {65, 96, 1},
                              {96, 96, 1},
                              {97, 128, 1},
                              {128, 128, 1},
                              {200, 128, 2},
                              {5000, 128, 8}});
}

TEST_CASE(
    "Expert pass policy, one FP8 expert alone: 8-row passes up to 32, 16 up to 128, then 64") {
  check_bands(kFp8LonePassBands, {{1, 8, 1},
                                  {8, 8, 1},
                                  {16, 8, 2},
                                  {32, 8, 4},
                                  {33, 16, 3},
                                  {64, 16, 4},
                                  {128, 16, 8},
                                  {129, 64, 3},
                                  {256, 64, 4},
                                  {5000, 64, 8}});
}

TEST_CASE("Expert pass policy: side-by-side passes cover the hint unless the band caps them") {
  for (std::span<PassBand const> const bands :
       {std::span<PassBand const>(kFp8PassBands), std::span<PassBand const>(kMxfp4PassBands),
        std::span<PassBand const>(kFp8LonePassBands)}) {
    for (int hint = 1; hint <= 1200; ++hint) {
      ExpertPasses const p = expert_passes_for(hint, bands);
      INFO("hint " << hint << " bands " << bands.size());
      CHECK(p.passes >= 1);
      CHECK(p.passes <= kMaxParallelPasses);
      // Covered in one go, or the band's cap of passes is reached and they loop over the rest.
      PassBand const& band = pass_band_for(hint, bands);
      CHECK(p.rows == band.rows);
      CHECK(
          (p.rows * p.passes >= hint || p.passes == std::min(band.max_passes, kMaxParallelPasses)));
      // No pass CTA left without rows at the hint.
      CHECK(p.rows * (p.passes - 1) < hint);
    }
  }
}

TEST_CASE("Expert pass policy: a lone expert's K split fills the SMs, within its limits") {
  // V4.1's shared expert on 132 SMs: L1 18 CTAs per pass over 40 chunks, L2 40 over 18.
  CHECK(lone_expert_k_splits(18, 40, 132, 8) == 5);   // T <= 8: 90 CTAs, 8 chunks each
  CHECK(lone_expert_k_splits(18, 40, 132, 4) == 4);   // capped by what the scratch holds
  CHECK(lone_expert_k_splits(40, 18, 132, 8) == 2);   // 80 CTAs, 9 chunks each
  CHECK(lone_expert_k_splits(36, 40, 132, 8) == 4);   // T=16: two 8-row passes side by side
  CHECK(lone_expert_k_splits(72, 40, 132, 8) == 2);   // T=32: four
  CHECK(lone_expert_k_splits(144, 40, 132, 8) == 1);  // enough CTAs already
  CHECK(lone_expert_k_splits(18, 15, 132, 8) == 1);   // fewer than 2 x 8 chunks: no split
  CHECK(lone_expert_k_splits(18, 40, 132, 1) == 1);
  for (int ctas = 1; ctas <= 300; ++ctas) {
    for (int chunks = 1; chunks <= 64; ++chunks) {
      int const s = lone_expert_k_splits(ctas, chunks, 132, 8);
      INFO("ctas " << ctas << " chunks " << chunks);
      CHECK(s >= 1);
      CHECK(s <= 8);
      CHECK((s == 1 || chunks / s >= kMinChunksPerSplit));
      CHECK((s == 1 || ctas * (s - 1) < 132));  // no more splits than filling the SMs needs
    }
  }
}

TEST_CASE("Expert pass policy at DeepSeek-V4.1's decode hints (384 experts, top-6)") {
  // One GPU: T = 256 gives a mean of 4 rows, a hint of 11: one 8-row pass, the few experts with
  // more rows loop.
  ExpertPasses const one_gpu = expert_passes_for(routed_rows_hint(256, 6, 384), kMxfp4PassBands);
  CHECK((one_gpu.rows == 8 && one_gpu.passes == 1));
  // One rank of eight (48 local experts): T = 32 per rank (mean 4) stays on one 8-row pass; T = 64
  // (mean 8, hint 18) takes one 16-row pass, T = 128 (mean 16, hint 29) one 32-row pass (the
  // experts with more rows loop), T = 256 (mean 32, hint 50) one 48-row pass (the few experts
  // over 48 rows loop).
  ExpertPasses const t32 = expert_passes_for(routed_rows_hint(32 * 8, 6, 384), kMxfp4PassBands);
  CHECK((t32.rows == 8 && t32.passes == 1));
  ExpertPasses const t64 = expert_passes_for(routed_rows_hint(64 * 8, 6, 384), kMxfp4PassBands);
  CHECK((t64.rows == 16 && t64.passes == 1));
  ExpertPasses const t128 = expert_passes_for(routed_rows_hint(128 * 8, 6, 384), kMxfp4PassBands);
  CHECK((t128.rows == 32 && t128.passes == 1));
  ExpertPasses const t256 = expert_passes_for(routed_rows_hint(256 * 8, 6, 384), kMxfp4PassBands);
  CHECK((t256.rows == 48 && t256.passes == 1));
}

TEST_CASE("A PDL launch's shared memory spreads a small grid over the SMs") {
  // The static part a kernel may add (< 512 B) to each CTA's dynamic shared memory.
  constexpr std::size_t kStatic = 512;
  auto const fits = [](std::size_t smem, int ctas_per_sm) {
    return static_cast<std::size_t>(ctas_per_sm) * (smem + kStatic + kCtaReservedSharedBytes) <=
           kSmSharedBytes;
  };
  // V4.1's MXFP4 L2 at one GPU T=1: 240 CTAs of ~40 KB, 4 per SM: two per SM at most over 132.
  std::size_t const l2 = pdl_spread_smem_bytes(40 * 1024, 240, 4, 132);
  CHECK(fits(l2, 2));
  CHECK_FALSE(fits(l2 - kStatic, 3));
  for (int const min_blocks : {2, 3, 4}) {
    for (int const sms : {60, 124, 132}) {
      for (int ctas = 1; ctas <= 4 * sms; ctas += 7) {
        std::size_t const smem = 30 * 1024;
        std::size_t const s = pdl_spread_smem_bytes(smem, ctas, min_blocks, sms);
        int const per_sm = (ctas + sms - 1) / sms;
        INFO("ctas " << ctas << " sms " << sms << " min_blocks " << min_blocks);
        CHECK(s >= smem);
        CHECK(s <= kMaxExpertGemmDynamicSmem);
        if (per_sm >= min_blocks) {
          CHECK(s == smem);  // the grid needs the full packing
        } else {
          CHECK(fits(s, per_sm));                      // the grid still runs in one wave
          CHECK_FALSE(fits(s - kStatic, per_sm + 1));  // and no SM takes more than its share
        }
      }
    }
  }
  // Nothing known about the SMs, or nothing to launch: as asked.
  CHECK(pdl_spread_smem_bytes(1000, 240, 4, 0) == 1000);
  CHECK(pdl_spread_smem_bytes(1000, 0, 4, 132) == 1000);
  // A request above the share stays as it is.
  CHECK(pdl_spread_smem_bytes(150 * 1024, 10, 4, 132) == 150 * 1024);
}

}  // namespace
}  // namespace gcmoe::kernels
