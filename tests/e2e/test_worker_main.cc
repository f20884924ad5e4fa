// TEST DOUBLE worker: the product's worker code (server/worker: communicator, RankEngine,
// RankService) hosting the deterministic test-double StepModel (tests/unit/runtime/
// test_step_model.h) instead of a model family, so the server's processes, streams, admission,
// faults and drain are tested end to end without a model. `gcmoe serve --worker-binary` starts it.
// GCMOE_TEST_STEP_DELAY_US slows each step (to catch requests mid-stream).
#include <spdlog/spdlog.h>

#include <cstdlib>

#include "engine/common/logging.h"
#include "server/worker/worker_cli.h"
#include "tests/unit/runtime/test_step_model.h"

namespace {

// The step model outlives nothing it refers to: the worker keeps the communicator alive longer.
gcmoe::StatusOr<std::unique_ptr<gcmoe::runtime::StepModel>> load_test_double(
    gcmoe::worker::WorkerOptions const& options, gcmoe::runtime::Communicator& comm) {
  gcmoe::testing::TestStepModelOptions model;
  model.kv_blocks = options.scheduler.kv_blocks;
  model.kv_block_size = options.scheduler.kv_block_size;
  if (char const* delay = std::getenv("GCMOE_TEST_STEP_DELAY_US"); delay != nullptr) {
    model.step_delay = std::chrono::microseconds(std::atol(delay));
  }
  return std::unique_ptr<gcmoe::runtime::StepModel>(
      std::make_unique<gcmoe::testing::TestStepModel>(model, comm));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gcmoe test-double worker (tests only)", "gcmoe_test_worker"};
  app.require_subcommand(1);
  auto run = gcmoe::worker::add_worker_subcommand(app, &load_test_double);
  CLI11_PARSE(app, argc, argv);
  if (gcmoe::Status const logging = gcmoe::init_logging(""); !logging.ok()) {
    return 2;
  }
  gcmoe::Status const status = run();
  if (!status.ok()) {
    spdlog::error("gcmoe_test_worker: {}", status.to_string());
    return 1;
  }
  return 0;
}
