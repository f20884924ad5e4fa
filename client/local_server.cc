#include "client/local_server.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <signal.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <fstream>
#include <thread>

#include "engine/common/check.h"
#include "gcmoe/v1/generate.grpc.pb.h"

extern char** environ;

namespace gcmoe::client {
namespace {

constexpr auto kPoll = std::chrono::milliseconds(100);
constexpr auto kStopGrace = std::chrono::seconds(30);
constexpr std::size_t kLogTailLines = 12;

std::string exit_text(int status) {
  if (WIFEXITED(status)) {
    return fmt::format("exit code {}", WEXITSTATUS(status));
  }
  return WIFSIGNALED(status) ? fmt::format("signal {}", WTERMSIG(status)) : "unknown status";
}

}  // namespace

std::string current_executable() {
  std::error_code error;
  std::filesystem::path const self = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string("gcmoe") : self.string();
}

StatusOr<std::unique_ptr<LocalServer>> LocalServer::start(
    std::string const& binary, std::vector<std::string> const& extra_args,
    std::chrono::seconds timeout) {
  std::unique_ptr<LocalServer> server(new LocalServer());
  std::string pattern = (std::filesystem::temp_directory_path() / "gcmoe-bench-XXXXXX").string();
  GCMOE_CHECK_INTERNAL(mkdtemp(pattern.data()) != nullptr, "mkdtemp {}", pattern);
  server->dir_ = pattern;
  server->log_path_ = pattern + "/serve.log";
  std::string const port_file = pattern + "/port";

  std::vector<std::string> args = {binary,        "serve",       "--listen",
                                   "127.0.0.1:0", "--port-file", port_file};
  if (std::find(extra_args.begin(), extra_args.end(), "--metrics-listen") == extra_args.end()) {
    args.insert(args.end(), {"--metrics-listen", ""});  // no fixed port to collide on
  }
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  std::vector<char*> argv;
  for (std::string& a : args) {
    argv.push_back(a.data());
  }
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, server->log_path_.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  int const spawned =
      posix_spawn(&server->pid_, binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    server->pid_ = -1;
    return unavailable_error(fmt::format("cannot start {} serve: {}", binary, strerror(spawned)));
  }
  spdlog::info("bench: started `gcmoe serve` (pid {}), log {}", server->pid_, server->log_path_);

  auto const deadline = std::chrono::steady_clock::now() + timeout;
  while (server->port_ <= 0) {
    int status = 0;
    if (waitpid(server->pid_, &status, WNOHANG) == server->pid_) {
      server->pid_ = -1;
      return unavailable_error(fmt::format("gcmoe serve exited ({}) before serving:\n{}",
                                           exit_text(status), server->log_tail()));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return unavailable_error(fmt::format("gcmoe serve wrote no port within {} s:\n{}",
                                           timeout.count(), server->log_tail()));
    }
    std::ifstream in(port_file);
    if (!(in >> server->port_)) {
      server->port_ = 0;
    }
    std::this_thread::sleep_for(kPoll);
  }
  GCMOE_RETURN_IF_ERROR(server->wait_ready(deadline));
  spdlog::info("bench: gcmoe serve ready on {}", server->target());
  return server;
}

Status LocalServer::wait_ready(std::chrono::steady_clock::time_point deadline) {
  auto channel = grpc::CreateChannel(target(), grpc::InsecureChannelCredentials());
  auto stub = v1::GenerateService::NewStub(channel);
  std::string last = "no answer";
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return unavailable_error(
          fmt::format("gcmoe serve exited ({}) while loading:\n{}", exit_text(status), log_tail()));
    }
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    v1::GetServerInfoResponse info;
    grpc::Status const answer = stub->GetServerInfo(&context, {}, &info);
    if (answer.ok() && info.ready()) {
      return Status();
    }
    last = answer.ok() ? info.status_message() : answer.error_message();
    std::this_thread::sleep_for(kPoll);
  }
  return unavailable_error(
      fmt::format("gcmoe serve not ready in time (last: {}):\n{}", last, log_tail()));
}

std::string LocalServer::log_tail() const {
  std::ifstream in(log_path_);
  std::deque<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
    if (lines.size() > kLogTailLines) {
      lines.pop_front();
    }
  }
  std::string text;
  for (std::string const& line : lines) {
    text += "  | " + line + "\n";
  }
  return text;
}

LocalServer::~LocalServer() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    auto const deadline = std::chrono::steady_clock::now() + kStopGrace;
    int status = 0;
    while (waitpid(pid_, &status, WNOHANG) != pid_) {
      if (std::chrono::steady_clock::now() >= deadline) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(kPoll);
    }
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

}  // namespace gcmoe::client
