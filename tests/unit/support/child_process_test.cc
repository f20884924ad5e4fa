// The multi-process test helpers (tests/support/child_process.h): a child runs one hidden test
// case of this executable, its exit code comes back, a failing child reports non-zero, and a child
// that hangs is killed at the deadline and reported as timed out.
#include "tests/support/child_process.h"

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "tests/support/catch.h"

namespace gcmoe::testing {
namespace {

TEST_CASE("child: does what GCMOE_CHILD_ACTION says", "[.child_action]") {
  char const* const set = std::getenv("GCMOE_CHILD_ACTION");
  REQUIRE(set != nullptr);
  std::string const action = set;
  if (action == "hang") {
    std::this_thread::sleep_for(std::chrono::seconds(60));
  }
  CHECK(action == "pass");
}

int run_child(std::string const& action, std::chrono::milliseconds timeout) {
  pid_t const pid = spawn_self({"[.child_action]"}, {{"GCMOE_CHILD_ACTION", action}});
  REQUIRE(pid > 0);
  std::vector<int> const codes = wait_all({pid}, timeout);
  REQUIRE(codes.size() == 1);
  return codes[0];
}

TEST_CASE("Child processes: exit codes come back, hangs end at the deadline") {
  CHECK(run_child("pass", std::chrono::seconds(30)) == 0);
  CHECK(run_child("fail", std::chrono::seconds(30)) != 0);
  auto const start = std::chrono::steady_clock::now();
  CHECK(run_child("hang", std::chrono::milliseconds(500)) == kChildTimedOut);
  // Killed at the deadline, not after the child's 60 s.
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}

}  // namespace
}  // namespace gcmoe::testing
