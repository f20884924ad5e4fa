#include "server/frontend/request_registry.h"

#include <fmt/format.h>

#include <utility>

namespace gcmoe::frontend {

RequestIdLease::RequestIdLease(RequestIdLease&& other) noexcept
    : registry_(std::exchange(other.registry_, nullptr)), id_(std::move(other.id_)) {}

RequestIdLease& RequestIdLease::operator=(RequestIdLease&& other) noexcept {
  if (this != &other) {
    reset();
    registry_ = std::exchange(other.registry_, nullptr);
    id_ = std::move(other.id_);
  }
  return *this;
}

RequestIdLease::~RequestIdLease() {
  reset();
}

void RequestIdLease::reset() {
  if (registry_ != nullptr) {
    registry_->release(id_);
    registry_ = nullptr;
  }
}

StatusOr<RequestIdLease> RequestRegistry::claim(std::string const& id) {
  std::lock_guard<std::mutex> const lock(mutex_);
  std::string chosen = id;
  if (chosen.empty()) {
    // Assigned ids skip any a client happens to use.
    do {
      chosen = fmt::format("gcmoe-{}", next_assigned_++);
    } while (in_flight_.contains(chosen));
  } else if (in_flight_.contains(chosen)) {
    return invalid_argument_error(fmt::format("request_id '{}' is already in flight", chosen));
  }
  in_flight_.insert(chosen);
  return RequestIdLease(this, std::move(chosen));
}

bool RequestRegistry::contains(std::string const& id) const {
  std::lock_guard<std::mutex> const lock(mutex_);
  return in_flight_.contains(id);
}

std::size_t RequestRegistry::size() const {
  std::lock_guard<std::mutex> const lock(mutex_);
  return in_flight_.size();
}

void RequestRegistry::release(std::string const& id) {
  std::lock_guard<std::mutex> const lock(mutex_);
  in_flight_.erase(id);
}

}  // namespace gcmoe::frontend
