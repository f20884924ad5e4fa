// The front-end's gRPC surface in-process on a free localhost port, through a real channel.
#include "server/frontend/frontend_server.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include <memory>

#include "tests/support/catch.h"

namespace gcmoe::frontend {
namespace {

struct Fixture {
  Fixture() {
    FrontendConfig config;
    config.listen_address = "127.0.0.1:0";
    config.identity = {"9.9.9-test", 2, "cpu"};
    StatusOr<std::unique_ptr<FrontendServer>> started = FrontendServer::start(config);
    REQUIRE(started.ok());
    server = std::move(started).value();
    REQUIRE(server->port() > 0);
    stub = v1::GenerateService::NewStub(grpc::CreateChannel(
        "127.0.0.1:" + std::to_string(server->port()), grpc::InsecureChannelCredentials()));
  }

  // Generate's final status (the stream carries no messages until a model exists).
  grpc::Status generate(v1::GenerateRequest const& request) {
    grpc::ClientContext context;
    std::unique_ptr<grpc::ClientReader<v1::GenerateResponse>> reader =
        stub->Generate(&context, request);
    v1::GenerateResponse response;
    int messages = 0;
    while (reader->Read(&response)) {
      ++messages;
    }
    CHECK(messages == 0);
    return reader->Finish();
  }

  v1::GetServerInfoResponse info() {
    grpc::ClientContext context;
    v1::GetServerInfoResponse response;
    REQUIRE(stub->GetServerInfo(&context, {}, &response).ok());
    return response;
  }

  std::unique_ptr<FrontendServer> server;
  std::unique_ptr<v1::GenerateService::Stub> stub;
};

v1::GenerateRequest valid_request() {
  v1::GenerateRequest r;
  r.add_prompt_token_ids(3);
  r.mutable_stopping()->set_max_new_tokens(4);
  return r;
}

TEST_CASE("without a model: info says why, malformed is INVALID_ARGUMENT, valid UNAVAILABLE") {
  Fixture f;
  v1::GetServerInfoResponse const info = f.info();
  CHECK(info.version() == "9.9.9-test");
  CHECK(info.ranks() == 2);
  CHECK(info.backend() == "cpu");
  CHECK_FALSE(info.ready());
  CHECK_FALSE(info.draining());
  CHECK(info.status_message() == kNoModelMessage);

  v1::GenerateRequest empty = valid_request();
  empty.clear_prompt_token_ids();
  grpc::Status const bad = f.generate(empty);
  CHECK(bad.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(bad.error_message().find("prompt_token_ids is empty") != std::string::npos);

  grpc::Status const valid = f.generate(valid_request());
  CHECK(valid.error_code() == grpc::StatusCode::UNAVAILABLE);
  CHECK(valid.error_message() == kNoModelMessage);
  CHECK(f.server->registry().size() == 0);  // the id claim ended with the call

  grpc::ClientContext model_context;
  v1::GetModelInfoResponse model;
  CHECK(f.stub->GetModelInfo(&model_context, {}, &model).error_code() ==
        grpc::StatusCode::UNAVAILABLE);
  grpc::ClientContext abort_context;
  v1::AbortRequest abort;
  abort.add_request_ids("x");
  v1::AbortResponse aborted;
  REQUIRE(f.stub->Abort(&abort_context, abort, &aborted).ok());  // nothing is in flight
  CHECK(aborted.aborted_size() == 0);
  REQUIRE(aborted.not_found_size() == 1);
  CHECK(aborted.not_found(0) == "x");
}

TEST_CASE("GetLoads reports each rank's scheduler stats and their total") {
  Fixture f;
  scheduler::SchedulerStats a;
  a.waiting = 3;
  a.running = 2;
  a.kv_blocks_total = 100;
  a.kv_blocks_reserved = 40;
  a.kv_blocks_allocated = 25;
  scheduler::SchedulerStats b;
  b.waiting = 1;
  b.kv_blocks_total = 100;
  REQUIRE(f.server->loads().update(0, a).ok());
  REQUIRE(f.server->loads().update(1, b).ok());
  CHECK(f.server->loads().update(2, b).code() == StatusCode::kOutOfRange);

  grpc::ClientContext context;
  v1::GetLoadsResponse loads;
  REQUIRE(f.stub->GetLoads(&context, {}, &loads).ok());
  REQUIRE(loads.ranks_size() == 2);
  CHECK(loads.ranks(0).rank() == 0);
  CHECK(loads.ranks(0).waiting_requests() == 3);
  CHECK(loads.ranks(0).running_requests() == 2);
  CHECK(loads.ranks(0).kv_blocks_used() == 25);
  CHECK(loads.ranks(0).kv_blocks_reserved() == 40);
  CHECK(loads.ranks(1).rank() == 1);
  CHECK(loads.ranks(1).waiting_requests() == 1);
  CHECK(loads.total().waiting_requests() == 4);
  CHECK(loads.total().running_requests() == 2);
  CHECK(loads.total().kv_blocks_total() == 200);
}

TEST_CASE("once ready, the model limits apply; without a rank group, UNAVAILABLE") {
  Fixture f;
  REQUIRE(f.server->state().mark_ready({100, 16}).ok());
  CHECK(f.info().ready());

  v1::GenerateRequest out_of_vocab = valid_request();
  out_of_vocab.add_prompt_token_ids(100);
  grpc::Status const vocab = f.generate(out_of_vocab);
  CHECK(vocab.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(vocab.error_message().find("vocabulary of 100") != std::string::npos);

  v1::GenerateRequest too_long = valid_request();
  too_long.mutable_stopping()->set_max_new_tokens(16);
  CHECK(f.generate(too_long).error_code() == grpc::StatusCode::INVALID_ARGUMENT);

  grpc::Status const valid = f.generate(valid_request());
  CHECK(valid.error_code() == grpc::StatusCode::UNAVAILABLE);
  CHECK(valid.error_message().find("restarting") != std::string::npos);
  CHECK(f.server->registry().size() == 0);
}

TEST_CASE("draining refuses new requests, then the server stops") {
  Fixture f;
  REQUIRE(f.server->state().mark_ready({100, 16}).ok());
  f.server->state().begin_drain();
  v1::GetServerInfoResponse const info = f.info();
  CHECK(info.draining());
  CHECK_FALSE(info.ready());
  grpc::Status const refused = f.generate(valid_request());
  CHECK(refused.error_code() == grpc::StatusCode::UNAVAILABLE);
  CHECK(refused.error_message().find("draining") != std::string::npos);

  f.server->drain_and_shutdown(std::chrono::milliseconds(200));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  v1::GetServerInfoResponse after;
  CHECK_FALSE(f.stub->GetServerInfo(&context, {}, &after).ok());
}

TEST_CASE("an address that cannot be bound is UNAVAILABLE") {
  Fixture f;
  FrontendConfig clash;
  clash.listen_address = "127.0.0.1:" + std::to_string(f.server->port());
  CHECK(FrontendServer::start(clash).status().code() == StatusCode::kUnavailable);
}

}  // namespace
}  // namespace gcmoe::frontend
