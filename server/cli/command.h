#pragma once
// A subcommand of the `gcmoe` binary: it registers its flags on the CLI11 app and returns the
// function that runs it once parsed. Errors come back as Status; main turns them into a log line
// and a nonzero exit code.

#include <CLI/CLI.hpp>
#include <functional>

#include "engine/common/status.h"

namespace gcmoe::cli {

using CommandRunner = std::function<Status()>;

CommandRunner add_devices_command(CLI::App& app);
CommandRunner add_smoke_command(CLI::App& app);
CommandRunner add_inspect_command(CLI::App& app);
CommandRunner add_make_tiny_command(CLI::App& app);
CommandRunner add_load_bench_command(CLI::App& app);
CommandRunner add_plan_command(CLI::App& app);
#if GCMOE_HAVE_GRPC
CommandRunner add_serve_command(CLI::App& app);
CommandRunner add_worker_command(CLI::App& app);
CommandRunner add_bench_command(CLI::App& app);
CommandRunner add_generate_command(CLI::App& app);
CommandRunner add_health_command(CLI::App& app);
#endif

}  // namespace gcmoe::cli
