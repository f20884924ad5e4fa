#include "tests/e2e/serve_process.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace gcmoe::testing {
namespace {

constexpr std::chrono::milliseconds kPoll{20};

}  // namespace

ServeProcess::ServeProcess(std::string const& binary, std::vector<std::string> const& extra_args,
                           std::chrono::seconds timeout) {
  std::string pattern = (std::filesystem::temp_directory_path() / "gcmoe-e2e-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("mkdtemp failed");
  }
  dir_ = pattern;
  std::string const port_file = dir_ + "/port";
  std::vector<std::string> args = {binary,        "serve",       "--listen",
                                   "127.0.0.1:0", "--port-file", port_file};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  std::vector<char*> argv;
  for (std::string& a : args) {
    argv.push_back(a.data());
  }
  argv.push_back(nullptr);
  if (posix_spawn(&pid_, binary.c_str(), nullptr, nullptr, argv.data(), environ) != 0) {
    throw std::runtime_error("cannot spawn " + binary);
  }
  auto const deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("gcmoe serve exited before serving");
    }
    std::ifstream in(port_file);
    if (in >> port_ && port_ > 0) {
      return;
    }
    std::this_thread::sleep_for(kPoll);
  }
  kill(pid_, SIGKILL);  // the destructor does not run for a constructor that throws
  int status = 0;
  waitpid(pid_, &status, 0);
  throw std::runtime_error("gcmoe serve wrote no port within the timeout");
}

std::optional<int> ServeProcess::stop(int signal, std::chrono::seconds timeout) {
  if (pid_ <= 0) {
    return std::nullopt;
  }
  kill(pid_, signal);
  auto const deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    }
    std::this_thread::sleep_for(kPoll);
  }
  return std::nullopt;
}

ServeProcess::~ServeProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

}  // namespace gcmoe::testing
