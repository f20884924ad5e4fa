#pragma once
// gcmoe.internal.v1.RankService on a rank process: the front-end's view of one RankEngine.
// Submit streams a sequence's tokens as the step loop produces them; a cancelled call (client
// cancel, deadline, front-end gone) aborts the sequence on the rank.

#include <cstdint>

#include "engine/runtime/rank_engine.h"
#include "gcmoe/internal/v1/rank.grpc.pb.h"

namespace gcmoe::worker {

class RankServiceImpl final : public internal::v1::RankService::Service {
 public:
  RankServiceImpl(runtime::RankEngine& engine, std::int32_t rank, std::int32_t world_size);

  grpc::Status Submit(grpc::ServerContext* context, internal::v1::SubmitRequest const* request,
                      grpc::ServerWriter<internal::v1::SubmitEvent>* writer) override;
  grpc::Status Abort(grpc::ServerContext* context, internal::v1::RankAbortRequest const* request,
                     internal::v1::RankAbortResponse* response) override;
  grpc::Status GetRankStatus(grpc::ServerContext* context,
                             internal::v1::RankStatusRequest const* request,
                             internal::v1::RankStatusResponse* response) override;

 private:
  runtime::RankEngine& engine_;
  std::int32_t rank_;
  std::int32_t world_size_;
};

// The proto finish reason of an engine one.
v1::FinishReason to_proto_reason(scheduler::FinishReason reason);

}  // namespace gcmoe::worker
