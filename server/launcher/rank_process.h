#pragma once
// One child process of the launcher: spawned with fork/exec, polled for its exit, signalled.

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "engine/common/status.h"

namespace gcmoe::launcher {

class RankProcess {
 public:
  // Starts `argv[0]` with `argv`. UNAVAILABLE when fork fails.
  static StatusOr<RankProcess> spawn(std::vector<std::string> const& argv);

  RankProcess(RankProcess&& other) noexcept;
  RankProcess& operator=(RankProcess&& other) noexcept;
  RankProcess(RankProcess const&) = delete;
  RankProcess& operator=(RankProcess const&) = delete;
  // Kills (SIGKILL) and reaps a process still running.
  ~RankProcess();

  pid_t pid() const { return pid_; }
  // The exit, once it happened: "exit code N" or "killed by signal N". Never blocks.
  std::optional<std::string> poll_exit();
  bool running() { return !poll_exit().has_value(); }
  void signal(int signal_number) const;
  // Sends SIGTERM, waits up to `grace_ms` for the exit, then SIGKILLs and reaps.
  void terminate(int grace_ms);

 private:
  explicit RankProcess(pid_t pid) : pid_(pid) {}

  pid_t pid_ = -1;
  std::optional<std::string> exit_;
};

}  // namespace gcmoe::launcher
