#include "tests/e2e/generate_client.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <httplib.h>

#include <thread>

#include "grpc/health/v1/health.grpc.pb.h"

namespace gcmoe::testing {

std::shared_ptr<grpc::Channel> connect_channel(std::string const& address) {
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10));
  return channel;
}

StreamResult collect_generate(
    v1::GenerateService::Stub& stub, v1::GenerateRequest const& request,
    std::optional<std::chrono::milliseconds> deadline,
    std::function<void(std::size_t, grpc::ClientContext&)> const& on_delta) {
  grpc::ClientContext context;
  if (deadline.has_value()) {
    context.set_deadline(std::chrono::system_clock::now() + *deadline);
  }
  StreamResult result;
  auto reader = stub.Generate(&context, request);
  v1::GenerateResponse response;
  while (reader->Read(&response)) {
    ++result.messages;
    if (response.has_delta()) {
      result.tokens.insert(result.tokens.end(), response.delta().token_ids().begin(),
                           response.delta().token_ids().end());
      if (on_delta) {
        on_delta(result.tokens.size(), context);
      }
    } else if (response.has_finished()) {
      result.finished = response.finished();
    }
  }
  result.status = reader->Finish();
  return result;
}

bool is_ready(std::shared_ptr<grpc::Channel> const& channel) {
  auto stub = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  grpc::health::v1::HealthCheckRequest request;
  request.set_service("gcmoe.v1.GenerateService");
  grpc::health::v1::HealthCheckResponse response;
  return stub->Check(&context, request, &response).ok() &&
         response.status() == grpc::health::v1::HealthCheckResponse::SERVING;
}

bool wait_ready(std::shared_ptr<grpc::Channel> const& channel, std::chrono::seconds timeout) {
  auto const deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (is_ready(channel)) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

std::string fetch_metrics(int port) {
  httplib::Client client("127.0.0.1", port);
  auto response = client.Get("/metrics");
  if (!response || response->status != 200) {
    return {};
  }
  return response->body;
}

v1::GenerateRequest make_request(std::string const& id, std::vector<std::uint32_t> const& prompt,
                                 std::uint32_t max_new_tokens, std::optional<std::uint64_t> seed,
                                 std::optional<float> temperature) {
  v1::GenerateRequest r;
  r.set_request_id(id);
  r.mutable_prompt_token_ids()->Add(prompt.begin(), prompt.end());
  r.mutable_stopping()->set_max_new_tokens(max_new_tokens);
  if (seed.has_value()) {
    r.mutable_sampling()->set_seed(*seed);
  }
  if (temperature.has_value()) {
    r.mutable_sampling()->set_temperature(*temperature);
  }
  return r;
}

}  // namespace gcmoe::testing
