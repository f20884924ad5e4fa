#include "engine/backends/cuda/partition_probe.h"

#include <vector>

#include "engine/backends/cuda/device_buffer.h"
#include "engine/backends/cuda/green_context.h"
#include "engine/common/cuda_driver.h"
#include "kernels/probe/sm_probe.h"

namespace gcmoe::cuda {
namespace {

StatusOr<std::vector<int>> read_back(DeviceBuffer<int> const& buffer) {
  std::vector<int> host(buffer.size());
  GCMOE_RETURN_IF_ERROR(buffer.copy_to_host(host));
  return host;
}

}  // namespace

StatusOr<PartitionProbeResult> probe_partition(int ordinal, int comm_sms) {
  // Load the probe before anything can spin (lazy loading under a spinner deadlocks).
  GCMOE_CHECK_CUDA(cudaSetDevice(ordinal));
  GCMOE_RETURN_IF_ERROR(kernels::preload_sm_probe());
  GCMOE_ASSIGN_OR_RETURN(SmPartition partition, SmPartition::create(ordinal, comm_sms));

  PartitionProbeResult result;
  result.requested_comm_sms = comm_sms;
  result.comm_sms = partition.comm().sm_count();
  result.compute_sms = partition.compute().sm_count();
  result.device_sms = partition.device_sm_count();

  // Twice each partition's size in blocks, one block resident per SM: every SM is touched.
  GCMOE_ASSIGN_OR_RETURN(auto comm_ids, DeviceBuffer<int>::allocate(2 * result.comm_sms));
  GCMOE_ASSIGN_OR_RETURN(auto compute_ids, DeviceBuffer<int>::allocate(2 * result.compute_sms));
  GCMOE_ASSIGN_OR_RETURN(auto flag, DeviceBuffer<unsigned int>::allocate(1));
  GCMOE_ASSIGN_OR_RETURN(auto timed_out, DeviceBuffer<int>::allocate(1));
  GCMOE_RETURN_IF_ERROR(comm_ids.fill_bytes(0xff));  // Poison: -1 is no SM id.
  GCMOE_RETURN_IF_ERROR(compute_ids.fill_bytes(0xff));
  GCMOE_RETURN_IF_ERROR(flag.fill_bytes(0));
  GCMOE_RETURN_IF_ERROR(timed_out.fill_bytes(0));

  kernels::SmProbeLaunch comm_launch;
  comm_launch.smids = comm_ids.data();
  comm_launch.blocks = 2 * result.comm_sms;
  comm_launch.wait_flag = flag.data();
  comm_launch.timed_out = timed_out.data();
  kernels::SmProbeLaunch compute_launch;
  compute_launch.smids = compute_ids.data();
  compute_launch.blocks = 2 * result.compute_sms;
  compute_launch.set_flag = flag.data();

  // The waiting comm probe goes first: it finishes early only if the compute probe runs beside it.
  GCMOE_RETURN_IF_ERROR(kernels::launch_sm_probe(comm_launch, partition.comm().stream()));
  GCMOE_RETURN_IF_ERROR(kernels::launch_sm_probe(compute_launch, partition.compute().stream()));
  GCMOE_ASSIGN_OR_RETURN(DriverApi const* cu, driver_api());
  GCMOE_CHECK_CU(cu->cuStreamSynchronize(partition.comm().stream()));
  GCMOE_CHECK_CU(cu->cuStreamSynchronize(partition.compute().stream()));

  GCMOE_ASSIGN_OR_RETURN(auto const comm_seen, read_back(comm_ids));
  GCMOE_ASSIGN_OR_RETURN(auto const compute_seen, read_back(compute_ids));
  GCMOE_ASSIGN_OR_RETURN(auto const waited, read_back(timed_out));
  for (int const id : comm_seen) {
    GCMOE_CHECK_INTERNAL(id >= 0, "a comm probe block never recorded its SM");
  }
  for (int const id : compute_seen) {
    GCMOE_CHECK_INTERNAL(id >= 0, "a compute probe block never recorded its SM");
  }
  result.ran_concurrently = waited[0] == 0;
  result.seen = kernels::observe_partitions(comm_seen, compute_seen);
  result.verdict = kernels::check_partitions(result.seen, result.comm_sms, result.compute_sms);
  return result;
}

}  // namespace gcmoe::cuda
