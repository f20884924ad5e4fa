#include "engine/scheduler/scheduler_types.h"

namespace gcmoe::scheduler {

std::string_view finish_reason_name(FinishReason reason) {
  switch (reason) {
    case FinishReason::kLength:
      return "length";
    case FinishReason::kStopToken:
      return "stop_token";
    case FinishReason::kEos:
      return "eos";
    case FinishReason::kAborted:
      return "aborted";
  }
  return "unknown";
}

}  // namespace gcmoe::scheduler
