#pragma once
// CPU-side checks of where kernels ran: given the SM ids that blocks of the comm-partition kernel
// and of the compute-partition kernel recorded, decide whether the partitions were disjoint and
// sized as asked. This is the reference the green-context GPU test is judged by.

#include <set>
#include <span>
#include <string>

#include "engine/common/status.h"

namespace gcmoe::kernels {

struct PartitionObservation {
  std::set<int> comm_sms;
  std::set<int> compute_sms;
};

PartitionObservation observe_partitions(std::span<int const> comm_smids,
                                        std::span<int const> compute_smids);

// OK when the two SM sets are disjoint, and each holds exactly the SM count its green context
// reports (the probe launches enough blocks to touch every SM of a partition). Otherwise
// FAILED_PRECONDITION naming what differs.
Status check_partitions(PartitionObservation const& seen, int comm_expected, int compute_expected);

}  // namespace gcmoe::kernels
