// `gcmoe devices`: the CUDA devices this process sees, their green-context granularity, and
// optionally a live comm/compute split probe.
#include <fmt/format.h>

#include "server/cli/command.h"

#if GCMOE_HAVE_CUDA
#include "engine/backends/cuda/device_info.h"
#include "engine/backends/cuda/partition_probe.h"
#endif

namespace gcmoe::cli {
namespace {

struct DevicesOptions {
  int probe_comm_sms = 0;  // 0: no probe
};

Status run_devices(DevicesOptions const& options) {
#if GCMOE_HAVE_CUDA
  int const count = cuda::visible_device_count();
  fmt::print("{} CUDA device(s) visible\n", count);
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    auto info = cuda::query_device(ordinal);
    if (!info.ok()) {
      return info.status().with_context(fmt::format("querying cuda:{}", ordinal));
    }
    fmt::print("{}\n", cuda::describe(*info));
    if (options.probe_comm_sms > 0) {
      auto probe = cuda::probe_partition(ordinal, options.probe_comm_sms);
      if (!probe.ok()) {
        return probe.status();
      }
      fmt::print("  split: comm {} SMs (asked {}), compute {} SMs; concurrent {}; {}\n",
                 probe->comm_sms, options.probe_comm_sms, probe->compute_sms,
                 probe->ran_concurrently ? "yes" : "NO", probe->verdict.to_string());
      if (!probe->verdict.ok()) {
        return probe->verdict;
      }
    }
  }
  return Status();
#else
  (void)options;
  fmt::print("built without CUDA: CPU backend only\n");
  return Status();
#endif
}

}  // namespace

CommandRunner add_devices_command(CLI::App& app) {
  auto options = std::make_shared<DevicesOptions>();
  CLI::App* sub = app.add_subcommand("devices", "List CUDA devices and green-context granularity");
  sub->add_option("--probe-comm-sms", options->probe_comm_sms,
                  "Also split each device into comm/compute green contexts of this many comm SMs "
                  "and check the SM sets (0 = no probe)")
      ->check(CLI::NonNegativeNumber);
  return [options] { return run_devices(*options); };
}

}  // namespace gcmoe::cli
