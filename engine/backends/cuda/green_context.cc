#include "engine/backends/cuda/green_context.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "engine/common/cuda_check.h"
#include "engine/common/cuda_driver.h"

namespace gcmoe::cuda {

GreenContext::GreenContext(GreenContext&& other) noexcept
    : green_ctx_(std::exchange(other.green_ctx_, nullptr)),
      context_(std::exchange(other.context_, nullptr)),
      stream_(std::exchange(other.stream_, nullptr)),
      side_stream_(std::exchange(other.side_stream_, nullptr)),
      sm_count_(std::exchange(other.sm_count_, 0)) {}

GreenContext& GreenContext::operator=(GreenContext&& other) noexcept {
  if (this != &other) {
    reset();
    green_ctx_ = std::exchange(other.green_ctx_, nullptr);
    context_ = std::exchange(other.context_, nullptr);
    stream_ = std::exchange(other.stream_, nullptr);
    side_stream_ = std::exchange(other.side_stream_, nullptr);
    sm_count_ = std::exchange(other.sm_count_, 0);
  }
  return *this;
}

GreenContext::~GreenContext() {
  reset();
}

void GreenContext::reset() {
  // Destruction errors cannot be returned; they are logged so a leak is visible. A handle exists
  // only if the driver table resolved, so it resolves here too.
  if (stream_ != nullptr || side_stream_ != nullptr || green_ctx_ != nullptr) {
    auto api = driver_api();
    for (CUstream const stream : {stream_, side_stream_}) {
      if (api.ok() && stream != nullptr && (*api)->cuStreamDestroy(stream) != CUDA_SUCCESS) {
        spdlog::warn("cuStreamDestroy failed for a green-context stream");
      }
    }
    if (api.ok() && green_ctx_ != nullptr &&
        (*api)->cuGreenCtxDestroy(green_ctx_) != CUDA_SUCCESS) {
      spdlog::warn("cuGreenCtxDestroy failed");
    }
  }
  stream_ = nullptr;
  side_stream_ = nullptr;
  green_ctx_ = nullptr;
  context_ = nullptr;
  sm_count_ = 0;
}

StatusOr<GreenContext> GreenContext::create(CUdevice device, CUdevResource resource) {
  GCMOE_ASSIGN_OR_RETURN(DriverApi const* cu, driver_api());
  GreenContext out;
  CUdevResourceDesc desc = nullptr;
  GCMOE_CHECK_CU(cu->cuDevResourceGenerateDesc(&desc, &resource, 1));
  GCMOE_CHECK_CU(cu->cuGreenCtxCreate(&out.green_ctx_, desc, device, CU_GREEN_CTX_DEFAULT_STREAM));
  GCMOE_CHECK_CU(cu->cuCtxFromGreenCtx(&out.context_, out.green_ctx_));
  GCMOE_CHECK_CU(
      cu->cuGreenCtxStreamCreate(&out.stream_, out.green_ctx_, CU_STREAM_NON_BLOCKING, 0));
  GCMOE_CHECK_CU(
      cu->cuGreenCtxStreamCreate(&out.side_stream_, out.green_ctx_, CU_STREAM_NON_BLOCKING, 0));
  CUdevResource actual{};
  GCMOE_CHECK_CU(cu->cuGreenCtxGetDevResource(out.green_ctx_, &actual, CU_DEV_RESOURCE_TYPE_SM));
  out.sm_count_ = static_cast<int>(actual.sm.smCount);
  return out;
}

int round_partition_sms(int requested, int min_sms, int alignment) {
  int sms = requested < min_sms ? min_sms : requested;
  if (alignment > 1) {
    sms = (sms + alignment - 1) / alignment * alignment;
  }
  return sms;
}

Status GreenContext::synchronize() const {
  GCMOE_ASSIGN_OR_RETURN(DriverApi const* cu, driver_api());
  for (CUstream const stream : {stream_, side_stream_}) {
    if (stream != nullptr) {
      GCMOE_CHECK_CU(cu->cuStreamSynchronize(stream));
    }
  }
  return Status();
}

Status SmPartition::synchronize() const {
  GCMOE_RETURN_IF_ERROR(comm_.synchronize());
  return compute_.synchronize();
}

StatusOr<SmPartition> SmPartition::create(int ordinal, int comm_sms) {
  GCMOE_CHECK_ARG(comm_sms > 0, "comm partition size must be positive, got {}", comm_sms);
  // The runtime owns the primary context; make it current so driver calls see the device.
  GCMOE_CHECK_CUDA(cudaSetDevice(ordinal));
  GCMOE_CHECK_CUDA(cudaFree(nullptr));
  GCMOE_ASSIGN_OR_RETURN(DriverApi const* cu, driver_api());
  CUdevice device = 0;
  GCMOE_CHECK_CU(cu->cuDeviceGet(&device, ordinal));

  CUdevResource all{};
  GCMOE_CHECK_CU(cu->cuDeviceGetDevResource(device, &all, CU_DEV_RESOURCE_TYPE_SM));
  int const total = static_cast<int>(all.sm.smCount);
  int const min_sms = static_cast<int>(all.sm.minSmPartitionSize);
  int const alignment = static_cast<int>(all.sm.smCoscheduledAlignment);
  int const rounded = round_partition_sms(comm_sms, min_sms, alignment);
  GCMOE_CHECK_ARG(total - rounded >= min_sms,
                  "comm partition of {} SMs (rounded to {}) leaves {} of {} SMs for compute, "
                  "below the minimum partition of {}",
                  comm_sms, rounded, total - rounded, total, min_sms);

  CUdevResource comm_resource{};
  CUdevResource rest{};
  unsigned int groups = 1;
  GCMOE_CHECK_CU(cu->cuDevSmResourceSplitByCount(&comm_resource, &groups, &all, &rest, 0,
                                                 static_cast<unsigned int>(rounded)));
  GCMOE_CHECK_INTERNAL(groups == 1, "SM split returned {} groups, expected 1", groups);

  SmPartition out;
  out.device_sm_count_ = total;
  GCMOE_ASSIGN_OR_RETURN(out.comm_, GreenContext::create(device, comm_resource));
  GCMOE_ASSIGN_OR_RETURN(out.compute_, GreenContext::create(device, rest));
  spdlog::debug("green contexts on cuda:{}: comm {} SMs (asked {}), compute {} SMs of {}", ordinal,
                out.comm_.sm_count(), comm_sms, out.compute_.sm_count(), total);
  return out;
}

}  // namespace gcmoe::cuda
