#pragma once
// `gcmoe bench --spawn-serve`: a `gcmoe serve` child process on a free localhost port for a
// self-contained run (README command one: serve the embedded default, load-test it, print the
// table). Its output goes to a log file; errors quote the log's last lines. Stopped with SIGTERM
// (drain) when the handle dies, SIGKILL if it has not exited 30 s later.

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "engine/common/status.h"

namespace gcmoe::client {

class LocalServer {
 public:
  // Spawns `binary serve --listen 127.0.0.1:0 --port-file ... extra_args...` and waits until it
  // reports ready (GetServerInfo) or `timeout` passes. UNAVAILABLE quoting the server's log when
  // it exits or is not ready in time.
  static StatusOr<std::unique_ptr<LocalServer>> start(std::string const& binary,
                                                      std::vector<std::string> const& extra_args,
                                                      std::chrono::seconds timeout);
  ~LocalServer();
  LocalServer(LocalServer const&) = delete;
  LocalServer& operator=(LocalServer const&) = delete;

  std::string target() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string const& log_path() const { return log_path_; }

 private:
  LocalServer() = default;
  Status wait_ready(std::chrono::steady_clock::time_point deadline);
  std::string log_tail() const;

  pid_t pid_ = -1;
  int port_ = 0;
  std::string dir_;
  std::string log_path_;
};

// The path of the running executable (/proc/self/exe), for spawning this same gcmoe.
std::string current_executable();

}  // namespace gcmoe::client
