#include "kernels/probe/partition_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <vector>

namespace gcmoe::kernels {

PartitionObservation observe_partitions(std::span<int const> comm_smids,
                                        std::span<int const> compute_smids) {
  PartitionObservation seen;
  seen.comm_sms.insert(comm_smids.begin(), comm_smids.end());
  seen.compute_sms.insert(compute_smids.begin(), compute_smids.end());
  return seen;
}

Status check_partitions(PartitionObservation const& seen, int comm_expected, int compute_expected) {
  std::vector<int> shared;
  std::set_intersection(seen.comm_sms.begin(), seen.comm_sms.end(), seen.compute_sms.begin(),
                        seen.compute_sms.end(), std::back_inserter(shared));
  if (!shared.empty()) {
    return failed_precondition_error(fmt::format("{} SMs ran blocks of both partitions, first {}",
                                                 shared.size(), shared.front()));
  }
  if (static_cast<int>(seen.comm_sms.size()) != comm_expected) {
    return failed_precondition_error(fmt::format("comm partition ran on {} SMs, expected {}",
                                                 seen.comm_sms.size(), comm_expected));
  }
  if (static_cast<int>(seen.compute_sms.size()) != compute_expected) {
    return failed_precondition_error(fmt::format("compute partition ran on {} SMs, expected {}",
                                                 seen.compute_sms.size(), compute_expected));
  }
  return Status();
}

}  // namespace gcmoe::kernels
