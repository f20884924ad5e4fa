#pragma once
// The `worker` subcommand's flags, shared by `gcmoe worker` (the product's model loader) and test
// binaries that host a test-double model behind the same worker code.

#include <CLI/CLI.hpp>
#include <functional>

#include "server/worker/worker.h"

namespace gcmoe::worker {

std::function<Status()> add_worker_subcommand(CLI::App& app, ModelLoader loader);

}  // namespace gcmoe::worker
