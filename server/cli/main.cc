// The single `gcmoe` binary. Subcommands are added as their parts land (serve, worker, inspect…).
#include <spdlog/spdlog.h>

#include <string>
#include <utility>
#include <vector>

#include "engine/common/logging.h"
#include "engine/common/version.h"
#include "server/cli/command.h"

int main(int argc, char** argv) {
  CLI::App app{"gcmoe: multi-GPU mixture-of-experts decode server (GC-MoE)", "gcmoe"};
  app.set_version_flag("--version", std::string(gcmoe::version_string()));
  std::string log_level;
  app.add_option("--log-level", log_level,
                 "trace|debug|info|warn|error|critical|off (default: $GCMOE_LOG_LEVEL or info)");
  app.require_subcommand(1);

  std::vector<std::pair<CLI::App*, gcmoe::cli::CommandRunner>> commands;
  auto const add = [&](gcmoe::cli::CommandRunner (*factory)(CLI::App&)) {
    std::size_t const before = app.get_subcommands({}).size();
    gcmoe::cli::CommandRunner runner = factory(app);
    commands.emplace_back(app.get_subcommands({}).at(before), std::move(runner));
  };
  add(&gcmoe::cli::add_devices_command);
  add(&gcmoe::cli::add_smoke_command);
  add(&gcmoe::cli::add_inspect_command);
  add(&gcmoe::cli::add_make_tiny_command);
  add(&gcmoe::cli::add_load_bench_command);
  add(&gcmoe::cli::add_plan_command);
#if GCMOE_HAVE_GRPC
  add(&gcmoe::cli::add_serve_command);
  add(&gcmoe::cli::add_worker_command);
  add(&gcmoe::cli::add_bench_command);
  add(&gcmoe::cli::add_generate_command);
  add(&gcmoe::cli::add_health_command);
#endif

  CLI11_PARSE(app, argc, argv);

  if (gcmoe::Status const logging = gcmoe::init_logging(log_level); !logging.ok()) {
    std::fprintf(stderr, "gcmoe: %s\n", logging.to_string().c_str());
    return 2;
  }
  for (auto const& [sub, run] : commands) {
    if (sub->parsed()) {
      gcmoe::Status const status = run();
      if (!status.ok()) {
        spdlog::error("gcmoe {}: {}", sub->get_name(), status.to_string());
        return 1;
      }
    }
  }
  return 0;
}
