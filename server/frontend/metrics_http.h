#pragma once
// GET /metrics (Prometheus text) over HTTP on its own port, served by cpp-httplib on a thread.

#include <memory>
#include <string>
#include <thread>

#include "engine/common/status.h"
#include "server/frontend/metrics.h"

namespace httplib {
class Server;
}

namespace gcmoe::frontend {

class MetricsHttpServer {
 public:
  // `host:port`; port 0 picks a free one. UNAVAILABLE when it cannot bind.
  static StatusOr<std::unique_ptr<MetricsHttpServer>> start(std::string const& listen,
                                                            ServingMetrics const& metrics);
  ~MetricsHttpServer();
  MetricsHttpServer(MetricsHttpServer const&) = delete;
  MetricsHttpServer& operator=(MetricsHttpServer const&) = delete;

  int port() const { return port_; }

 private:
  MetricsHttpServer() = default;

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace gcmoe::frontend
