#pragma once
// The single-process reference of a serving test: the same requests decoded by one RankEngine
// driven directly in this process (no server, no rank processes), over a given StepModel. What
// the server streams must equal it token for token (same model, same seeds).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/runtime/communicator.h"
#include "engine/runtime/step_model.h"
#include "gcmoe/v1/generate.pb.h"

namespace gcmoe::testing {

struct ReferenceOutput {
  std::vector<std::uint32_t> tokens;
  v1::FinishReason reason = v1::FINISH_REASON_UNSPECIFIED;
};

// Every request must carry a seed. Keyed by request_id.
std::map<std::string, ReferenceOutput> reference_decode(
    runtime::StepModel& model, runtime::Communicator& comm,
    std::vector<v1::GenerateRequest> const& requests, std::int32_t kv_blocks,
    std::int32_t kv_block_size);

}  // namespace gcmoe::testing
