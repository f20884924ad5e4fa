#include "server/frontend/serving_state.h"

#include <utility>

namespace gcmoe::frontend {

ServingState::ServingState(std::string not_ready_reason) {
  state_.message = std::move(not_ready_reason);
}

void ServingState::set_readiness_listener(ReadinessListener listener) {
  bool serving = false;
  {
    std::lock_guard<std::mutex> const lock(mutex_);
    listener_ = std::move(listener);
    serving = state_.ready && !state_.draining;
  }
  notify(serving);
}

Status ServingState::mark_ready(ModelLimits const& limits) {
  {
    std::lock_guard<std::mutex> const lock(mutex_);
    if (state_.draining) {
      return failed_precondition_error("cannot turn ready while draining");
    }
    state_.ready = true;
    state_.limits = limits;
    state_.message = "serving";
  }
  notify(true);
  return Status();
}

void ServingState::mark_not_ready(std::string reason) {
  {
    std::lock_guard<std::mutex> const lock(mutex_);
    if (state_.draining) {
      return;
    }
    state_.ready = false;
    state_.message = std::move(reason);
  }
  notify(false);
}

void ServingState::begin_drain() {
  {
    std::lock_guard<std::mutex> const lock(mutex_);
    if (state_.draining) {
      return;
    }
    state_.draining = true;
    state_.message = "draining: not accepting new requests";
  }
  notify(false);
}

ServingSnapshot ServingState::snapshot() const {
  std::lock_guard<std::mutex> const lock(mutex_);
  return state_;
}

Status ServingState::check_serving() const {
  std::lock_guard<std::mutex> const lock(mutex_);
  if (state_.ready && !state_.draining) {
    return Status();
  }
  return unavailable_error(state_.message);
}

void ServingState::notify(bool serving) {
  // Outside the lock: the listener may call back into gRPC.
  ReadinessListener listener;
  {
    std::lock_guard<std::mutex> const lock(mutex_);
    listener = listener_;
  }
  if (listener) {
    listener(serving);
  }
}

}  // namespace gcmoe::frontend
