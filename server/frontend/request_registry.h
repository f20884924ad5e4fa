#pragma once
// The request ids in flight on this front-end: a client id must be unique among them
// (INVALID_ARGUMENT otherwise, as issue 7 asks for malformed requests), an empty one is assigned
// ("gcmoe-<n>"). A claim is an RAII lease: the id is free again when the lease dies.
// Thread-safe: every gRPC handler thread claims and releases here.

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_set>

#include "engine/common/status.h"

namespace gcmoe::frontend {

class RequestRegistry;

class RequestIdLease {
 public:
  RequestIdLease() = default;
  RequestIdLease(RequestIdLease&& other) noexcept;
  RequestIdLease& operator=(RequestIdLease&& other) noexcept;
  RequestIdLease(RequestIdLease const&) = delete;
  RequestIdLease& operator=(RequestIdLease const&) = delete;
  ~RequestIdLease();

  std::string const& id() const { return id_; }

 private:
  friend class RequestRegistry;
  RequestIdLease(RequestRegistry* registry, std::string id)
      : registry_(registry), id_(std::move(id)) {}
  void reset();

  RequestRegistry* registry_ = nullptr;
  std::string id_;
};

class RequestRegistry {
 public:
  // Claims `id` (or a fresh one when empty). INVALID_ARGUMENT if it is already in flight.
  StatusOr<RequestIdLease> claim(std::string const& id);
  bool contains(std::string const& id) const;
  std::size_t size() const;

 private:
  friend class RequestIdLease;
  void release(std::string const& id);

  mutable std::mutex mutex_;
  std::unordered_set<std::string> in_flight_;
  std::uint64_t next_assigned_ = 1;
};

}  // namespace gcmoe::frontend
