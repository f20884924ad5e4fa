#pragma once
// Requests streaming on the front-end: where each runs (group generation, rank, sequence id) and
// its call to the rank, so Abort can find it by client id and draining can cancel what is left.
// Thread-safe.

#include <grpcpp/client_context.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "server/frontend/rank_group.h"

namespace gcmoe::frontend {

struct InFlightRequest {
  std::shared_ptr<RankGroup const> group;
  std::uint32_t rank = 0;
  std::uint64_t sequence_id = 0;
  grpc::ClientContext* call = nullptr;  // owned by the request's handler, valid while listed
};

class InFlightTable {
 public:
  void add(std::string const& id, InFlightRequest request) {
    std::lock_guard<std::mutex> const lock(mutex_);
    requests_[id] = std::move(request);
  }
  void remove(std::string const& id) {
    std::lock_guard<std::mutex> const lock(mutex_);
    requests_.erase(id);
  }
  std::optional<InFlightRequest> find(std::string const& id) const {
    std::lock_guard<std::mutex> const lock(mutex_);
    auto const it = requests_.find(id);
    return it == requests_.end() ? std::nullopt : std::optional<InFlightRequest>(it->second);
  }
  // Cancels one listed call (under the lock: a listed call is alive). False if not listed.
  bool cancel(std::string const& id) {
    std::lock_guard<std::mutex> const lock(mutex_);
    auto const it = requests_.find(id);
    if (it == requests_.end()) {
      return false;
    }
    it->second.call->TryCancel();
    return true;
  }
  // Cancels every listed call to its rank (its handler then ends the client's stream).
  std::size_t cancel_all() {
    std::lock_guard<std::mutex> const lock(mutex_);
    for (auto& [id, request] : requests_) {
      request.call->TryCancel();
    }
    return requests_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<std::string, InFlightRequest> requests_;
};

}  // namespace gcmoe::frontend
