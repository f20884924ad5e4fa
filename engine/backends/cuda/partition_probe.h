#pragma once
// Proves a comm/compute split on a real GPU: makes the two green contexts, runs the %smid probe in
// both at once (the comm probe waits on a flag the compute probe sets, with a timeout), and
// judges the SM sets with the CPU-side check. Used by `gcmoe devices --probe`, `gcmoe smoke` and
// the gpu tests.

#include "engine/common/status.h"
#include "kernels/probe/partition_check.h"

namespace gcmoe::cuda {

struct PartitionProbeResult {
  int requested_comm_sms = 0;
  int comm_sms = 0;     // as the green context reports it
  int compute_sms = 0;  // as the green context reports it
  int device_sms = 0;
  kernels::PartitionObservation seen;
  bool ran_concurrently = false;  // the comm probe saw the compute probe's flag before timing out
  Status verdict;                 // disjointness and sizes, from kernels::check_partitions
};

StatusOr<PartitionProbeResult> probe_partition(int ordinal, int comm_sms);

}  // namespace gcmoe::cuda
