// Names of the device waits that passed their deadline (kernels/moe/wait_sites.h).
#include "kernels/moe/wait_sites.h"

#include "tests/support/catch.h"

namespace gcmoe::kernels {
namespace {

TEST_CASE("Wait sites are named in a fixed order, unknown bits in hex") {
  CHECK(wait_sites_to_string(0).empty());
  CHECK(wait_sites_to_string(kWaitRows) == "rows");
  CHECK(wait_sites_to_string(kWaitDone | kWaitCounts) == "counts, done");
  CHECK(wait_sites_to_string(kWaitRows | kWaitLayout | kWaitCounts | kWaitDone) ==
        "rows, layout, counts, done");
  CHECK(wait_sites_to_string(kWaitBarrier | kWaitRows) == "rows, barrier");
  CHECK(wait_sites_to_string(kWaitCounts | 0x40u) == "counts, other (0x40)");
}

}  // namespace
}  // namespace gcmoe::kernels
