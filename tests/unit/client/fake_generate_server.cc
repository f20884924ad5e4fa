#include "tests/unit/client/fake_generate_server.h"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

#include <algorithm>
#include <stdexcept>
#include <thread>

namespace gcmoe::testing {

grpc::Status FakeGenerateService::Generate(grpc::ServerContext* context,
                                           v1::GenerateRequest const* request,
                                           grpc::ServerWriter<v1::GenerateResponse>* writer) {
  requests_.fetch_add(1);
  std::int32_t const now_active = active_.fetch_add(1) + 1;
  struct Leave {
    std::atomic<std::int32_t>& active;
    ~Leave() { active.fetch_sub(1); }
  } leave{active_};
  if (now_active > options_.max_active) {
    return {grpc::StatusCode::RESOURCE_EXHAUSTED, "fake server: too many active streams"};
  }
  std::int32_t peak = peak_active_.load();
  while (now_active > peak && !peak_active_.compare_exchange_weak(peak, now_active)) {
  }
  if (request->stopping().max_new_tokens() == 0) {
    return {grpc::StatusCode::INVALID_ARGUMENT, "max_new_tokens must be > 0"};
  }
  std::this_thread::sleep_for(options_.first_token_delay);
  std::uint32_t sent = 0;
  std::uint32_t const total = request->stopping().max_new_tokens();
  while (sent < total) {
    if (context->IsCancelled()) {
      return {grpc::StatusCode::CANCELLED, "cancelled"};
    }
    if (sent > 0) {
      std::this_thread::sleep_for(options_.token_gap);
    }
    v1::GenerateResponse response;
    response.set_request_id(request->request_id());
    std::uint32_t const n = std::min(options_.tokens_per_chunk, total - sent);
    for (std::uint32_t i = 0; i < n; ++i) {
      response.mutable_delta()->add_token_ids((sent + i) % options_.vocab_size);
    }
    sent += n;
    writer->Write(response);
  }
  v1::GenerateResponse last;
  last.set_request_id(request->request_id());
  v1::Finished* finished = last.mutable_finished();
  finished->set_reason(v1::FINISH_REASON_LENGTH);
  finished->set_prompt_tokens(static_cast<std::uint32_t>(request->prompt_token_ids_size()));
  finished->set_completion_tokens(total);
  writer->Write(last);
  return grpc::Status::OK;
}

grpc::Status FakeGenerateService::GetModelInfo(grpc::ServerContext*, v1::GetModelInfoRequest const*,
                                               v1::GetModelInfoResponse* response) {
  response->set_model_type("fake");
  response->set_model_path("/fake/model");
  response->set_vocab_size(options_.vocab_size);
  response->set_max_context_tokens(options_.max_context_tokens);
  return grpc::Status::OK;
}

FakeGenerateServer::FakeGenerateServer(FakeServerOptions options) : service_(options) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
  builder.RegisterService(&service_);
  server_ = builder.BuildAndStart();
  if (!server_ || port_ == 0) {
    throw std::runtime_error("fake server: cannot bind 127.0.0.1:0");
  }
}

FakeGenerateServer::~FakeGenerateServer() {
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
}

}  // namespace gcmoe::testing
