#include "server/frontend/serving_state.h"

#include <vector>

#include "tests/support/catch.h"

namespace gcmoe::frontend {
namespace {

TEST_CASE("serving state: loading -> ready -> draining, readiness heard at every change") {
  ServingState state(kNoModelMessage);
  std::vector<bool> heard;
  state.set_readiness_listener([&](bool serving) { heard.push_back(serving); });
  CHECK(heard == std::vector<bool>{false});  // told the current state at once

  Status const loading = state.check_serving();
  CHECK(loading.code() == StatusCode::kUnavailable);
  CHECK(loading.message() == kNoModelMessage);
  CHECK_FALSE(state.snapshot().limits.has_value());

  REQUIRE(state.mark_ready({32000, 4096}).ok());
  CHECK(state.check_serving().ok());
  ServingSnapshot const ready = state.snapshot();
  CHECK(ready.ready);
  REQUIRE(ready.limits.has_value());
  CHECK(ready.limits->vocab_size == 32000);

  state.begin_drain();
  state.begin_drain();  // once is enough; no second notification
  CHECK(heard == std::vector<bool>{false, true, false});
  Status const draining = state.check_serving();
  CHECK(draining.code() == StatusCode::kUnavailable);
  CHECK(draining.message().find("draining") != std::string::npos);
  CHECK(state.snapshot().draining);
  CHECK(state.mark_ready({32000, 4096}).code() == StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace gcmoe::frontend
