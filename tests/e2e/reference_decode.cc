#include "tests/e2e/reference_decode.h"

#include <mutex>
#include <stdexcept>

#include "engine/runtime/rank_engine.h"
#include "server/frontend/request_validation.h"
#include "server/worker/rank_service.h"

namespace gcmoe::testing {

std::map<std::string, ReferenceOutput> reference_decode(
    runtime::StepModel& model, runtime::Communicator& comm,
    std::vector<v1::GenerateRequest> const& requests, std::int32_t kv_blocks,
    std::int32_t kv_block_size) {
  runtime::RankEngineConfig config;
  config.scheduler.kv_blocks = kv_blocks;
  config.scheduler.kv_block_size = kv_block_size;
  config.scheduler.max_waiting_requests = static_cast<std::int32_t>(requests.size()) + 1;
  auto engine = runtime::RankEngine::create(config, model, comm);
  if (!engine.ok()) {
    throw std::runtime_error(engine.status().to_string());
  }
  std::mutex mutex;
  std::map<std::string, ReferenceOutput> out;
  std::size_t finished = 0;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    v1::GenerateRequest const& r = requests[i];
    runtime::RankRequest rank;
    rank.id = i + 1;
    rank.prompt.assign(r.prompt_token_ids().begin(), r.prompt_token_ids().end());
    rank.sampling = frontend::sampling_params_from_proto(r.sampling());
    rank.max_new_tokens = static_cast<std::int32_t>(r.stopping().max_new_tokens());
    rank.stop_token_ids.assign(r.stopping().stop_token_ids().begin(),
                               r.stopping().stop_token_ids().end());
    rank.ignore_eos = r.stopping().ignore_eos();
    std::string const id = r.request_id();
    rank.on_tokens = [&, id](std::span<std::int32_t const> tokens) {
      std::lock_guard<std::mutex> const lock(mutex);
      out[id].tokens.insert(out[id].tokens.end(), tokens.begin(), tokens.end());
    };
    rank.on_finished = [&, id](runtime::SequenceResult const& result) {
      std::lock_guard<std::mutex> const lock(mutex);
      out[id].reason = worker::to_proto_reason(result.reason);
      ++finished;
    };
    if (Status const s = (*engine)->submit(std::move(rank)); !s.ok()) {
      throw std::runtime_error(s.to_string());
    }
  }
  while (true) {
    {
      std::lock_guard<std::mutex> const lock(mutex);
      if (finished == requests.size()) {
        break;
      }
    }
    StatusOr<runtime::LoopState> const state = (*engine)->step_once();
    if (!state.ok()) {
      throw std::runtime_error(state.status().to_string());
    }
  }
  return out;
}

}  // namespace gcmoe::testing
