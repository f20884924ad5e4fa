#include "bench/common/gpu_clock_sampler.h"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace gcmoe::bench {
namespace {

// The few NVML entry points used, by their documented C signatures (nvml.h is not installed on
// the build machine; the ABI is stable across drivers). Return value 0 is NVML_SUCCESS.
using NvmlDevice = void*;
using InitFn = int (*)();
using ShutdownFn = int (*)();
using HandleByPciFn = int (*)(char const*, NvmlDevice*);
using ClockInfoFn = int (*)(NvmlDevice, int, unsigned*);
using PowerUsageFn = int (*)(NvmlDevice, unsigned*);
using EventReasonsFn = int (*)(NvmlDevice, unsigned long long*);

constexpr int kNvmlClockSm = 1;

}  // namespace

struct GpuClockSampler::Nvml {
  void* library = nullptr;
  ShutdownFn shutdown = nullptr;
  ClockInfoFn clock_info = nullptr;
  PowerUsageFn power_usage = nullptr;
  EventReasonsFn event_reasons = nullptr;
  NvmlDevice device = nullptr;

  ~Nvml() {
    if (shutdown != nullptr) {
      shutdown();
    }
    if (library != nullptr) {
      dlclose(library);
    }
  }

  // False when NVML cannot read the clock (the sample is then dropped, not counted as 0 MHz).
  bool sample(ClockSample& s) const {
    if (clock_info(device, kNvmlClockSm, &s.sm_mhz) != 0) {
      return false;
    }
    if (power_usage(device, &s.power_mw) != 0) {
      s.power_mw = 0;
    }
    if (event_reasons != nullptr && event_reasons(device, &s.event_reasons) != 0) {
      s.event_reasons = 0;
    }
    return true;
  }
};

GpuClockSampler::GpuClockSampler(int cuda_device) {
  nvml_ = open_nvml(cuda_device);
  if (nvml_ == nullptr) {
    std::fprintf(stderr, "NVML unavailable: no SM clock or power beside the times\n");
  }
}

std::unique_ptr<GpuClockSampler::Nvml> GpuClockSampler::open_nvml(int cuda_device) {
  auto nvml = std::make_unique<Nvml>();
  nvml->library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (nvml->library == nullptr) {
    return nullptr;
  }
  auto const init = reinterpret_cast<InitFn>(dlsym(nvml->library, "nvmlInit_v2"));
  auto const by_pci =
      reinterpret_cast<HandleByPciFn>(dlsym(nvml->library, "nvmlDeviceGetHandleByPciBusId_v2"));
  nvml->clock_info = reinterpret_cast<ClockInfoFn>(dlsym(nvml->library, "nvmlDeviceGetClockInfo"));
  nvml->power_usage =
      reinterpret_cast<PowerUsageFn>(dlsym(nvml->library, "nvmlDeviceGetPowerUsage"));
  // Renamed in driver 535; the older name stays exported.
  nvml->event_reasons = reinterpret_cast<EventReasonsFn>(
      dlsym(nvml->library, "nvmlDeviceGetCurrentClocksEventReasons"));
  if (nvml->event_reasons == nullptr) {
    nvml->event_reasons = reinterpret_cast<EventReasonsFn>(
        dlsym(nvml->library, "nvmlDeviceGetCurrentClocksThrottleReasons"));
  }
  if (init == nullptr || by_pci == nullptr || nvml->clock_info == nullptr ||
      nvml->power_usage == nullptr || init() != 0) {
    return nullptr;
  }
  nvml->shutdown = reinterpret_cast<ShutdownFn>(dlsym(nvml->library, "nvmlShutdown"));
  char bus_id[32] = {};
  if (cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), cuda_device) != cudaSuccess ||
      by_pci(bus_id, &nvml->device) != 0) {
    return nullptr;
  }
  return nvml;
}

GpuClockSampler::GpuClockSampler()
    : GpuClockSampler([] {
        int device = 0;
        return cudaGetDevice(&device) == cudaSuccess ? device : 0;
      }()) {}

GpuClockSampler::~GpuClockSampler() {
  static_cast<void>(stop());
}

bool GpuClockSampler::available() const {
  return nvml_ != nullptr;
}

void GpuClockSampler::start(int period_us) {
  static_cast<void>(stop());
  if (!available()) {
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    samples_.clear();
  }
  running_ = true;
  thread_ = std::thread([this, period_us] {
    while (running_) {
      ClockSample s;
      if (nvml_->sample(s)) {
        std::lock_guard<std::mutex> lock(mutex_);
        samples_.push_back(s);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(std::max(period_us, 100)));
    }
  });
}

ClockStats GpuClockSampler::stop() {
  running_ = false;
  if (thread_.joinable()) {
    thread_.join();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  ClockStats const stats = summarize(samples_);
  samples_.clear();
  return stats;
}

}  // namespace gcmoe::bench
