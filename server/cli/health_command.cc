// `gcmoe health --target HOST:PORT`: the standard gRPC health check, for container health checks
// and scripts. Exit 0 when the server reports SERVING; 1 (with the state or error) otherwise.
// Default: readiness (a model loaded, not draining); --liveness checks only that it runs.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "client/health_check.h"
#include "engine/common/check.h"
#include "server/cli/command.h"

namespace gcmoe::cli {
namespace {

struct HealthFlags {
  std::string target = "localhost:50051";
  std::string service = client::kReadinessService;
  bool liveness = false;
  double timeout_s = 5.0;
};

Status run_health(HealthFlags const& flags) {
  std::string const service = flags.liveness ? std::string() : flags.service;
  GCMOE_ASSIGN_OR_RETURN(
      client::HealthState const state,
      client::check_health(
          flags.target, service,
          std::chrono::milliseconds(static_cast<std::int64_t>(flags.timeout_s * 1000.0))));
  std::string const name(client::health_state_name(state));
  if (state != client::HealthState::kServing) {
    return unavailable_error(fmt::format("{} '{}' at {}: {}",
                                         flags.liveness ? "liveness" : "readiness", service,
                                         flags.target, name));
  }
  std::printf("%s\n", name.c_str());
  return Status();
}

}  // namespace

CommandRunner add_health_command(CLI::App& app) {
  auto flags = std::make_shared<HealthFlags>();
  CLI::App* sub =
      app.add_subcommand("health", "gRPC health check of a gcmoe server (exit 0 when SERVING)");
  sub->add_option("--target", flags->target, "host:port of `gcmoe serve`")->capture_default_str();
  sub->add_option("--service", flags->service, "Health service name to check")
      ->capture_default_str();
  sub->add_flag("--liveness", flags->liveness,
                "Check liveness (service \"\") instead of readiness");
  sub->add_option("--timeout", flags->timeout_s, "Seconds to wait for the answer")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  return [flags] { return run_health(*flags); };
}

}  // namespace gcmoe::cli
