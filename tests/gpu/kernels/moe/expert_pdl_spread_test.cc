// The expert GEMMs' PDL launches spread over the SMs (expert_pass_policy.h,
// pdl_spread_smem_bytes): for every pass width of both weight formats, the occupancy API at the
// shared memory the launch asks for must hold exactly the CTAs per SM the spread promises — one
// wave where the grid fits one, no SM above its share where the packing would crowd it.
#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "kernels/moe/expert_launch_sms.h"
#include "kernels/moe/fp8_expert_wgmma.h"
#include "kernels/moe/mxfp4_expert_wgmma.h"
#include "tests/support/catch.h"

namespace gcmoe::kernels {
namespace {

using CtasPerSm = std::function<StatusOr<int>(ExpertGemmStage, int, int, int)>;

void check_spread(char const* name, CtasPerSm const& ctas_per_sm, ExpertGemmStage stage,
                  int pass_rows, int sms) {
  // A grid of 8 CTAs per SM never spreads: the configuration's full packing.
  StatusOr<int> const full = ctas_per_sm(stage, pass_rows, 8 * sms, sms);
  REQUIRE(full.ok());
  REQUIRE(*full >= 1);
  std::string line =
      fmt::format("{} {} {:>3} rows, {} SMs: full {}; by CTAs per SM needed:", name,
                  stage == ExpertGemmStage::kGateUp ? "L1" : "L2", pass_rows, sms, *full);
  for (int const ctas : {1, sms / 2, sms, sms + 1, 2 * sms, 2 * sms + 1, 3 * sms, 4 * sms}) {
    int const per_sm = (ctas + sms - 1) / sms;
    StatusOr<int> const got = ctas_per_sm(stage, pass_rows, ctas, sms);
    REQUIRE(got.ok());
    INFO(name << " rows " << pass_rows << " ctas " << ctas << " sms " << sms);
    // One wave where the full packing allows one, and no SM above its share where it would crowd.
    CHECK(*got == std::min(per_sm, *full));
    line += fmt::format(" {}->{}", per_sm, *got);
  }
  fmt::print("{}\n", line);
}

TEST_CASE("Expert GEMMs launched by PDL hold the CTAs per SM their spread promises") {
  REQUIRE(preload_fp8_expert_wgmma().ok());
  REQUIRE(preload_mxfp4_expert_wgmma().ok());
  int const device_sms = device_sm_count();
  REQUIRE(device_sms > 0);
  // The whole device and a compute partition as GC-MoE's plans make them (8 and 48 SMs for comm).
  for (int const sms : {device_sms, device_sms - 8, device_sms - 48}) {
    for (ExpertGemmStage const stage : {ExpertGemmStage::kGateUp, ExpertGemmStage::kDown}) {
      for (int const rows : {8, 16, 64, 96, 128}) {
        check_spread("fp8", fp8_expert_wgmma_pdl_ctas_per_sm, stage, rows, sms);
      }
      for (int const rows : {8, 16, 32, 48}) {
        check_spread("mxfp4", mxfp4_expert_wgmma_pdl_ctas_per_sm, stage, rows, sms);
      }
    }
  }
  // A width with no kernel is refused, never guessed.
  CHECK(fp8_expert_wgmma_pdl_ctas_per_sm(ExpertGemmStage::kDown, 32, 100, device_sms)
            .status()
            .code() == StatusCode::kInvalidArgument);
  CHECK(mxfp4_expert_wgmma_pdl_ctas_per_sm(ExpertGemmStage::kDown, 64, 100, device_sms)
            .status()
            .code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gcmoe::kernels
