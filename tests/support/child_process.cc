#include "tests/support/child_process.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

extern char** environ;

namespace gcmoe::testing {

pid_t spawn_self(std::vector<std::string> const& args,
                 std::vector<std::pair<std::string, std::string>> const& env) {
  std::string const self = "/proc/self/exe";
  std::vector<std::string> storage;
  storage.push_back(self);
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : storage) {
    argv.push_back(a.data());
  }
  argv.push_back(nullptr);
  std::vector<std::string> env_storage;
  for (char** e = environ; *e != nullptr; ++e) {
    env_storage.emplace_back(*e);
  }
  for (auto const& [name, value] : env) {
    env_storage.push_back(name + "=" + value);
  }
  std::vector<char*> envp;
  for (auto& e : env_storage) {
    envp.push_back(e.data());
  }
  envp.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv.data(), envp.data()) != 0) {
    return -1;
  }
  return pid;
}

std::vector<int> wait_all(std::vector<pid_t> const& pids, std::chrono::milliseconds timeout) {
  std::vector<int> codes(pids.size(), kChildTimedOut);
  std::vector<bool> done(pids.size(), false);
  auto const deadline = std::chrono::steady_clock::now() + timeout;
  std::size_t left = pids.size();
  while (left > 0 && std::chrono::steady_clock::now() < deadline) {
    for (std::size_t i = 0; i < pids.size(); ++i) {
      if (done[i]) {
        continue;
      }
      int status = 0;
      pid_t const got = waitpid(pids[i], &status, WNOHANG);
      if (got == pids[i] || got < 0) {
        done[i] = true;
        --left;
        codes[i] = got < 0               ? 127
                   : WIFEXITED(status)   ? WEXITSTATUS(status)
                   : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                         : 127;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (std::size_t i = 0; i < pids.size(); ++i) {
    if (!done[i]) {
      kill(pids[i], SIGKILL);
      int status = 0;
      waitpid(pids[i], &status, 0);
    }
  }
  return codes;
}

}  // namespace gcmoe::testing
