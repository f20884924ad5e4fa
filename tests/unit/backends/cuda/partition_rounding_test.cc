#include "engine/backends/cuda/green_context.h"
#include "tests/support/catch.h"

namespace gcmoe::cuda {
namespace {

TEST_CASE("comm partition sizes round like the driver (H200: min 8, alignment 8)") {
  CHECK(round_partition_sms(1, 8, 8) == 8);
  CHECK(round_partition_sms(16, 8, 8) == 16);
  CHECK(round_partition_sms(20, 8, 8) == 24);  // Measured on H200: 20 -> 24 + 108.
  CHECK(round_partition_sms(48, 8, 8) == 48);
  CHECK(round_partition_sms(5, 2, 1) == 5);
}

}  // namespace
}  // namespace gcmoe::cuda
