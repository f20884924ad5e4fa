#include "server/launcher/rank_process.h"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <thread>

namespace gcmoe::launcher {

StatusOr<RankProcess> RankProcess::spawn(std::vector<std::string> const& argv) {
  // Built before fork: the child may only call async-signal-safe functions.
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (std::string const& a : argv) {
    args.push_back(const_cast<char*>(a.c_str()));
  }
  args.push_back(nullptr);
  pid_t const pid = ::fork();
  if (pid < 0) {
    return unavailable_error(fmt::format("fork failed: {}", std::strerror(errno)));
  }
  if (pid == 0) {
    // The launcher blocks SIGTERM/SIGINT in its threads; the worker sets up its own handling.
    sigset_t none;
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return RankProcess(pid);
}

RankProcess::RankProcess(RankProcess&& other) noexcept
    : pid_(other.pid_), exit_(std::move(other.exit_)) {
  other.pid_ = -1;
}

RankProcess& RankProcess::operator=(RankProcess&& other) noexcept {
  if (this != &other) {
    terminate(0);
    pid_ = other.pid_;
    exit_ = std::move(other.exit_);
    other.pid_ = -1;
  }
  return *this;
}

RankProcess::~RankProcess() {
  terminate(0);
}

std::optional<std::string> RankProcess::poll_exit() {
  if (pid_ <= 0 || exit_.has_value()) {
    return exit_;
  }
  int status = 0;
  pid_t const done = ::waitpid(pid_, &status, WNOHANG);
  if (done == pid_) {
    exit_ = WIFEXITED(status) ? fmt::format("exit code {}", WEXITSTATUS(status))
                              : fmt::format("killed by signal {}", WTERMSIG(status));
  } else if (done < 0) {
    exit_ = fmt::format("lost ({})", std::strerror(errno));
  }
  return exit_;
}

void RankProcess::signal(int signal_number) const {
  if (pid_ > 0 && !exit_.has_value()) {
    ::kill(pid_, signal_number);
  }
}

void RankProcess::terminate(int grace_ms) {
  if (pid_ <= 0 || poll_exit().has_value()) {
    return;
  }
  if (grace_ms > 0) {
    signal(SIGTERM);
    for (int waited = 0; waited < grace_ms && !poll_exit().has_value(); waited += 10) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  if (!poll_exit().has_value()) {
    signal(SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    exit_ = "killed by signal 9";
  }
}

}  // namespace gcmoe::launcher
