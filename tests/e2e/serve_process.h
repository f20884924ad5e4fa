#pragma once
// `gcmoe serve` as a child process for end-to-end tests: started on a free localhost port (the
// server writes the port it bound to --port-file), stopped with a signal, killed if still alive
// when the handle dies.

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace gcmoe::testing {

class ServeProcess {
 public:
  // Spawns `binary serve --listen 127.0.0.1:0 --port-file ... extra_args...` and waits up to
  // `timeout` for the port. Throws std::runtime_error on failure (tests only).
  ServeProcess(std::string const& binary, std::vector<std::string> const& extra_args,
               std::chrono::seconds timeout);
  ~ServeProcess();
  ServeProcess(ServeProcess const&) = delete;
  ServeProcess& operator=(ServeProcess const&) = delete;

  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  pid_t pid() const { return pid_; }
  // The /metrics port (serve is started with --metrics-listen 127.0.0.1:0 unless the extra
  // arguments name another), 0 when it is off.
  int metrics_port() const;
  // The pids of the server's child processes (its rank workers), lowest first.
  std::vector<pid_t> children() const;

  // Sends `signal` and waits up to `timeout` for the exit. The exit status, or nullopt when it
  // did not exit in time (or died by a signal: then -signal).
  std::optional<int> stop(int signal, std::chrono::seconds timeout);

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string dir_;
};

}  // namespace gcmoe::testing
