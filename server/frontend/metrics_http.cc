#include "server/frontend/metrics_http.h"

#include <fmt/format.h>
#include <httplib.h>
#include <spdlog/spdlog.h>

namespace gcmoe::frontend {

StatusOr<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::start(
    std::string const& listen, ServingMetrics const& metrics) {
  std::size_t const colon = listen.rfind(':');
  if (colon == std::string::npos) {
    return invalid_argument_error(fmt::format("metrics address '{}' is not host:port", listen));
  }
  std::string const host = listen.substr(0, colon);
  int port = 0;
  try {
    port = std::stoi(listen.substr(colon + 1));
  } catch (std::exception const&) {
    return invalid_argument_error(fmt::format("metrics address '{}' has no port number", listen));
  }
  std::unique_ptr<MetricsHttpServer> self(new MetricsHttpServer());
  self->server_ = std::make_unique<httplib::Server>();
  self->server_->Get("/metrics", [&metrics](httplib::Request const&, httplib::Response& res) {
    res.set_content(metrics.render(), "text/plain; version=0.0.4; charset=utf-8");
  });
  if (port == 0) {
    self->port_ = self->server_->bind_to_any_port(host);
  } else {
    self->port_ = self->server_->bind_to_port(host, port) ? port : -1;
  }
  if (self->port_ <= 0) {
    return unavailable_error(fmt::format("cannot listen for /metrics on {}", listen));
  }
  httplib::Server* server = self->server_.get();
  self->thread_ = std::thread([server] { server->listen_after_bind(); });
  spdlog::info("gcmoe metrics: http://{}:{}/metrics", host, self->port_);
  return self;
}

MetricsHttpServer::~MetricsHttpServer() {
  if (server_ != nullptr) {
    server_->stop();
  }
  if (thread_.joinable()) {
    thread_.join();
  }
}

}  // namespace gcmoe::frontend
