// `gcmoe serve` end to end, as a client sees it: a child process on a free localhost port, real
// gRPC channels, the standard health and reflection protocols, the gcmoe.v1 API, and SIGTERM.
// It prints what it observes, so the log doubles as a demonstration of what works today.
#include <google/protobuf/descriptor.pb.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include <csignal>
#include <cstdio>
#include <set>
#include <string>

#include "gcmoe/v1/generate.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
#include "tests/e2e/serve_process.h"
#include "tests/support/catch.h"

namespace gcmoe {
namespace {

using HealthStatus = grpc::health::v1::HealthCheckResponse;
constexpr char kServiceName[] = "gcmoe.v1.GenerateService";

std::shared_ptr<grpc::Channel> connect(std::string const& address) {
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  REQUIRE(channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10)));
  return channel;
}

grpc::Status health_check(std::shared_ptr<grpc::Channel> const& channel, std::string const& service,
                          HealthStatus& response) {
  auto stub = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext context;
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  return stub->Check(&context, request, &response);
}

// One reflection exchange on a fresh stream.
grpc::reflection::v1alpha::ServerReflectionResponse reflect(
    std::shared_ptr<grpc::Channel> const& channel,
    grpc::reflection::v1alpha::ServerReflectionRequest const& request) {
  auto stub = grpc::reflection::v1alpha::ServerReflection::NewStub(channel);
  grpc::ClientContext context;
  auto stream = stub->ServerReflectionInfo(&context);
  REQUIRE(stream->Write(request));
  REQUIRE(stream->WritesDone());
  grpc::reflection::v1alpha::ServerReflectionResponse response;
  REQUIRE(stream->Read(&response));
  grpc::reflection::v1alpha::ServerReflectionResponse extra;
  CHECK_FALSE(stream->Read(&extra));  // one answer per request
  REQUIRE(stream->Finish().ok());
  return response;
}

grpc::Status generate(v1::GenerateService::Stub& stub, v1::GenerateRequest const& request) {
  grpc::ClientContext context;
  auto reader = stub.Generate(&context, request);
  v1::GenerateResponse response;
  int messages = 0;
  while (reader->Read(&response)) {
    ++messages;
  }
  CHECK(messages == 0);  // no fake tokens
  return reader->Finish();
}

v1::GenerateRequest valid_request() {
  v1::GenerateRequest r;
  r.set_request_id("e2e-1");
  r.add_prompt_token_ids(1);
  r.add_prompt_token_ids(2);
  r.mutable_stopping()->set_max_new_tokens(4);
  return r;
}

// A model directory that does not exist: the ranks fail to load, the supervisor keeps retrying,
// and the front-end stays up, live but not ready, saying why.
TEST_CASE("gcmoe serve: health, reflection, info, loads, validation, SIGTERM") {
  testing::ServeProcess serve(GCMOE_BINARY,
                              {"--ranks", "2", "--backend", "cpu", "--kv-blocks", "512",
                               "--shutdown-timeout", "5", "--model", "/nonexistent/gcmoe-model"},
                              std::chrono::seconds(30));
  std::printf("e2e: gcmoe serve listening on %s\n", serve.address().c_str());
  std::shared_ptr<grpc::Channel> const channel = connect(serve.address());

  SECTION("health: live, not ready while the ranks cannot load, unknown services NOT_FOUND") {
    HealthStatus live;
    REQUIRE(health_check(channel, "", live).ok());
    CHECK(live.status() == HealthStatus::SERVING);
    HealthStatus ready;
    REQUIRE(health_check(channel, kServiceName, ready).ok());
    CHECK(ready.status() == HealthStatus::NOT_SERVING);
    HealthStatus unknown;
    CHECK(health_check(channel, "no.such.Service", unknown).error_code() ==
          grpc::StatusCode::NOT_FOUND);
    std::printf("e2e: health '' = %s, '%s' = %s\n",
                HealthStatus::ServingStatus_Name(live.status()).c_str(), kServiceName,
                HealthStatus::ServingStatus_Name(ready.status()).c_str());
  }

  SECTION("reflection lists the services and serves the API's descriptor") {
    grpc::reflection::v1alpha::ServerReflectionRequest list;
    list.set_list_services("");
    auto const listed = reflect(channel, list);
    REQUIRE(listed.has_list_services_response());
    std::set<std::string> names;
    for (auto const& service : listed.list_services_response().service()) {
      names.insert(service.name());
      std::printf("e2e: reflection lists %s\n", service.name().c_str());
    }
    CHECK(names.contains(kServiceName));
    CHECK(names.contains("grpc.health.v1.Health"));
    CHECK(names.contains("grpc.reflection.v1alpha.ServerReflection"));

    grpc::reflection::v1alpha::ServerReflectionRequest symbol;
    symbol.set_file_containing_symbol(kServiceName);
    auto const file = reflect(channel, symbol);
    REQUIRE(file.has_file_descriptor_response());
    REQUIRE(file.file_descriptor_response().file_descriptor_proto_size() >= 1);
    google::protobuf::FileDescriptorProto descriptor;
    REQUIRE(descriptor.ParseFromString(file.file_descriptor_response().file_descriptor_proto(0)));
    CHECK(descriptor.name() == "gcmoe/v1/generate.proto");
    REQUIRE(descriptor.service_size() == 1);
    CHECK(descriptor.service(0).method_size() == 5);
  }

  SECTION("GetServerInfo and GetLoads") {
    auto stub = v1::GenerateService::NewStub(channel);
    grpc::ClientContext info_context;
    v1::GetServerInfoResponse info;
    REQUIRE(stub->GetServerInfo(&info_context, {}, &info).ok());
    std::printf("e2e: GetServerInfo version=%s ranks=%u backend=%s ready=%d draining=%d '%s'\n",
                info.version().c_str(), info.ranks(), info.backend().c_str(), info.ready(),
                info.draining(), info.status_message().c_str());
    CHECK(info.version().rfind("0.", 0) == 0);
    CHECK(info.ranks() == 2);
    CHECK(info.backend() == "cpu");
    CHECK_FALSE(info.ready());
    CHECK_FALSE(info.draining());
    CHECK_FALSE(info.status_message().empty());

    grpc::ClientContext loads_context;
    v1::GetLoadsResponse loads;
    REQUIRE(stub->GetLoads(&loads_context, {}, &loads).ok());
    REQUIRE(loads.ranks_size() == 2);
    CHECK(loads.ranks(1).rank() == 1);
    CHECK(loads.ranks(1).kv_blocks_total() == 512);
    CHECK(loads.total().kv_blocks_total() == 1024);
    CHECK(loads.total().waiting_requests() == 0);
    CHECK(loads.total().kv_blocks_used() == 0);
    std::printf("e2e: GetLoads ranks=%d total kv_blocks=%llu waiting=%u running=%u\n",
                loads.ranks_size(),
                static_cast<unsigned long long>(loads.total().kv_blocks_total()),
                loads.total().waiting_requests(), loads.total().running_requests());
  }

  SECTION("Generate: malformed is INVALID_ARGUMENT, well-formed says why it cannot run") {
    auto stub = v1::GenerateService::NewStub(channel);
    std::vector<std::pair<char const*, v1::GenerateRequest>> malformed;
    v1::GenerateRequest r = valid_request();
    r.clear_prompt_token_ids();
    malformed.emplace_back("empty prompt", r);
    r = valid_request();
    r.mutable_stopping()->set_max_new_tokens(0);
    malformed.emplace_back("max_new_tokens 0", r);
    r = valid_request();
    r.mutable_sampling()->set_top_p(2.0f);
    malformed.emplace_back("top_p 2", r);
    r = valid_request();
    r.mutable_sampling()->set_temperature(-1.0f);
    malformed.emplace_back("temperature -1", r);
    r = valid_request();
    r.set_request_id("has space");
    malformed.emplace_back("request id with a space", r);
    for (auto const& [what, request] : malformed) {
      grpc::Status const status = generate(*stub, request);
      std::printf("e2e: Generate(%s) -> %d %s\n", what, static_cast<int>(status.error_code()),
                  status.error_message().c_str());
      CHECK(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    }
    grpc::Status const valid = generate(*stub, valid_request());
    std::printf("e2e: Generate(valid) -> %d %s\n", static_cast<int>(valid.error_code()),
                valid.error_message().c_str());
    CHECK(valid.error_code() == grpc::StatusCode::UNAVAILABLE);
    CHECK_FALSE(valid.error_message().empty());
  }

  std::optional<int> const exit_code = serve.stop(SIGTERM, std::chrono::seconds(15));
  REQUIRE(exit_code.has_value());
  CHECK(*exit_code == 0);
  std::printf("e2e: SIGTERM -> drained and exited with %d\n", *exit_code);
}

}  // namespace
}  // namespace gcmoe
