// Green-context smoke test: comm and compute partitions made through the driver API, a probe
// kernel on each records %smid, and the SM sets must be disjoint and sized as the driver reports
// (after its rounding). Kernels are loaded before the concurrent launch, and the comm probe waits
// (with a timeout) for a flag the compute probe sets, so both ran at the same time.
#include "engine/backends/cuda/green_context.h"

#include <cstdio>

#include "engine/backends/cuda/device_info.h"
#include "engine/backends/cuda/partition_probe.h"
#include "tests/support/catch.h"

namespace gcmoe::cuda {
namespace {

TEST_CASE("device info reports the green-context granularity") {
  auto info = query_device(0);
  REQUIRE(info.status().to_string() == "OK");
  std::printf("%s\n", describe(*info).c_str());
  CHECK(info->sm_count > 0);
  CHECK(info->green_ctx_min_sms > 0);
  CHECK(info->green_ctx_sm_alignment > 0);
}

TEST_CASE("comm and compute partitions run on disjoint SM sets of the asked sizes") {
  int const requested = GENERATE(8, 16, 20, 48);
  auto info = query_device(0);
  REQUIRE(info.ok());
  auto probe = probe_partition(0, requested);
  REQUIRE(probe.status().to_string() == "OK");
  std::printf(
      "green ctx: asked %d -> comm %d SMs (seen %zu), compute %d SMs (seen %zu) of %d, "
      "concurrent=%d: %s\n",
      requested, probe->comm_sms, probe->seen.comm_sms.size(), probe->compute_sms,
      probe->seen.compute_sms.size(), probe->device_sms, probe->ran_concurrently ? 1 : 0,
      probe->verdict.to_string().c_str());
  CHECK(probe->comm_sms ==
        round_partition_sms(requested, info->green_ctx_min_sms, info->green_ctx_sm_alignment));
  CHECK(probe->comm_sms + probe->compute_sms <= probe->device_sms);
  CHECK(probe->ran_concurrently);
  CHECK(probe->verdict.ok());
}

TEST_CASE("a comm partition that leaves too little for compute is refused") {
  auto info = query_device(0);
  REQUIRE(info.ok());
  auto probe = probe_partition(0, info->sm_count);
  CHECK(probe.status().code() == StatusCode::kInvalidArgument);
  std::printf("refused as expected: %s\n", probe.status().to_string().c_str());
}

}  // namespace
}  // namespace gcmoe::cuda
