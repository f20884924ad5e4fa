#pragma once
// Front-end admission and routing, as a plain object (thread-safe, no I/O). Each rank accepts at
// most `per_rank_capacity` requests in flight (its running plus waiting limits), so a request
// that is admitted here always fits the rank's own queue; when every rank is full the request is
// refused with RESOURCE_EXHAUSTED before anything is sent, so nothing admitted is ever lost.
// The router gives a request to the least-loaded rank with room: fewest reserved tokens
// (prompt + max_new_tokens of its requests in flight), then fewest requests, then lowest rank.

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "engine/common/status.h"

namespace gcmoe::frontend {

struct RankShare {
  std::int32_t requests = 0;
  std::int64_t tokens = 0;
};

class Admission;

// A request's place on a rank; gives it back when destroyed.
class AdmissionTicket {
 public:
  AdmissionTicket() = default;
  AdmissionTicket(AdmissionTicket&& other) noexcept;
  AdmissionTicket& operator=(AdmissionTicket&& other) noexcept;
  AdmissionTicket(AdmissionTicket const&) = delete;
  AdmissionTicket& operator=(AdmissionTicket const&) = delete;
  ~AdmissionTicket();

  std::uint32_t rank() const { return rank_; }

 private:
  friend class Admission;
  AdmissionTicket(Admission* admission, std::uint32_t rank, std::int64_t tokens)
      : admission_(admission), rank_(rank), tokens_(tokens) {}

  Admission* admission_ = nullptr;
  std::uint32_t rank_ = 0;
  std::int64_t tokens_ = 0;
};

class Admission {
 public:
  // INVALID_ARGUMENT unless ranks >= 1 and per_rank_capacity >= 1.
  static StatusOr<std::unique_ptr<Admission>> create(std::uint32_t ranks,
                                                     std::int32_t per_rank_capacity);

  // Routes a request reserving `tokens` to a rank. RESOURCE_EXHAUSTED when every rank is full.
  StatusOr<AdmissionTicket> admit(std::int64_t tokens);

  std::vector<RankShare> shares() const;
  std::int32_t in_flight() const;
  std::int32_t capacity() const {
    return per_rank_capacity_ * static_cast<std::int32_t>(shares_.size());
  }

 private:
  friend class AdmissionTicket;
  Admission(std::uint32_t ranks, std::int32_t per_rank_capacity)
      : per_rank_capacity_(per_rank_capacity), shares_(ranks) {}
  void release(std::uint32_t rank, std::int64_t tokens);

  std::int32_t per_rank_capacity_;
  mutable std::mutex mutex_;
  std::vector<RankShare> shares_;
};

}  // namespace gcmoe::frontend
