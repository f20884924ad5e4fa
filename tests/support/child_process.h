#pragma once
// Multi-process tests: the test executable starts copies of itself that run one hidden Catch2
// test case each (selected by tag, parameters in environment variables), and waits for them with
// a deadline — a child that hangs is killed and reported, never waited on forever.

#include <sys/types.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace gcmoe::testing {

// Starts /proc/self/exe with `args` (e.g. a Catch2 tag filter) and this process's environment plus
// `env` (NAME, value) pairs; stdout and stderr are inherited. Returns the pid, or -1 (errno set).
pid_t spawn_self(std::vector<std::string> const& args,
                 std::vector<std::pair<std::string, std::string>> const& env);

// Waits for every pid; at the deadline the ones still running get SIGKILL. Per pid: the exit
// code, 128 + the signal that ended it, or kChildTimedOut.
inline constexpr int kChildTimedOut = -1;
std::vector<int> wait_all(std::vector<pid_t> const& pids, std::chrono::milliseconds timeout);

}  // namespace gcmoe::testing
