#include "kernels/probe/partition_check.h"

#include <vector>

#include "tests/support/catch.h"

namespace gcmoe::kernels {
namespace {

TEST_CASE("disjoint partitions of the expected sizes pass") {
  std::vector<int> const comm = {0, 1, 0, 1};
  std::vector<int> const compute = {2, 3, 4, 2};
  CHECK(check_partitions(observe_partitions(comm, compute), 2, 3).ok());
}

TEST_CASE("an SM shared by both partitions fails") {
  std::vector<int> const comm = {0, 1};
  std::vector<int> const compute = {1, 2};
  Status const status = check_partitions(observe_partitions(comm, compute), 2, 2);
  CHECK(status.code() == StatusCode::kFailedPrecondition);
  CHECK(status.message().find("both partitions") != std::string::npos);
}

TEST_CASE("a partition smaller or larger than its green context fails") {
  std::vector<int> const comm = {0};
  std::vector<int> const compute = {2, 3};
  CHECK_FALSE(check_partitions(observe_partitions(comm, compute), 2, 2).ok());
  CHECK_FALSE(check_partitions(observe_partitions(comm, compute), 1, 1).ok());
}

}  // namespace
}  // namespace gcmoe::kernels
