#include "tests/e2e/serve_process.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
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
  // Tests run in parallel: never the fixed default metrics port.
  if (std::find(extra_args.begin(), extra_args.end(), "--metrics-listen") == extra_args.end()) {
    args.insert(args.end(),
                {"--metrics-listen", "127.0.0.1:0", "--metrics-port-file", dir_ + "/metrics-port"});
  }
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

int ServeProcess::metrics_port() const {
  std::ifstream in(dir_ + "/metrics-port");
  int port = 0;
  in >> port;
  return port;
}

std::vector<pid_t> ServeProcess::children() const {
  std::vector<pid_t> out;
  for (auto const& entry : std::filesystem::directory_iterator("/proc")) {
    std::string const name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) {
      continue;
    }
    // "pid (comm) state ppid ...": fields after the last ')'.
    std::istringstream rest(line.substr(line.rfind(')') + 2));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == pid_ && state != 'Z') {
      out.push_back(static_cast<pid_t>(std::stol(name)));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
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
