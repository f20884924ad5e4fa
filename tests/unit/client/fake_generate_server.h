#pragma once
// A test double of the public gcmoe.v1.GenerateService on a free localhost port: GetModelInfo
// answers a fixed model; Generate streams max_new_tokens token ids (tokens_per_chunk per delta,
// `token_gap` apart, after `first_token_delay`) then a Finished message, and refuses with
// RESOURCE_EXHAUSTED when more than `max_active` streams are open. It exercises the client's
// gRPC runner and metrics without a model; the real server is tested in tests/e2e.

#include <grpcpp/server.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "gcmoe/v1/generate.grpc.pb.h"

namespace gcmoe::testing {

struct FakeServerOptions {
  std::uint32_t vocab_size = 1000;
  std::uint32_t max_context_tokens = 4096;
  std::chrono::milliseconds first_token_delay{5};
  std::chrono::milliseconds token_gap{2};
  std::uint32_t tokens_per_chunk = 1;
  std::int32_t max_active = 1 << 20;
};

class FakeGenerateService final : public v1::GenerateService::Service {
 public:
  explicit FakeGenerateService(FakeServerOptions options) : options_(options) {}

  grpc::Status Generate(grpc::ServerContext* context, v1::GenerateRequest const* request,
                        grpc::ServerWriter<v1::GenerateResponse>* writer) override;
  grpc::Status GetModelInfo(grpc::ServerContext* context, v1::GetModelInfoRequest const* request,
                            v1::GetModelInfoResponse* response) override;

  std::int32_t peak_active() const { return peak_active_.load(); }
  std::int64_t requests() const { return requests_.load(); }

 private:
  FakeServerOptions options_;
  std::atomic<std::int32_t> active_{0};
  std::atomic<std::int32_t> peak_active_{0};
  std::atomic<std::int64_t> requests_{0};
};

class FakeGenerateServer {
 public:
  explicit FakeGenerateServer(FakeServerOptions options);
  ~FakeGenerateServer();

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  FakeGenerateService& service() { return service_; }

 private:
  FakeGenerateService service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace gcmoe::testing
