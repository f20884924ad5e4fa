#include "server/frontend/admission.h"

#include <fmt/format.h>

#include "engine/common/check.h"

namespace gcmoe::frontend {

AdmissionTicket::AdmissionTicket(AdmissionTicket&& other) noexcept
    : admission_(other.admission_), rank_(other.rank_), tokens_(other.tokens_) {
  other.admission_ = nullptr;
}

AdmissionTicket& AdmissionTicket::operator=(AdmissionTicket&& other) noexcept {
  if (this != &other) {
    if (admission_ != nullptr) {
      admission_->release(rank_, tokens_);
    }
    admission_ = other.admission_;
    rank_ = other.rank_;
    tokens_ = other.tokens_;
    other.admission_ = nullptr;
  }
  return *this;
}

AdmissionTicket::~AdmissionTicket() {
  if (admission_ != nullptr) {
    admission_->release(rank_, tokens_);
  }
}

StatusOr<std::unique_ptr<Admission>> Admission::create(std::uint32_t ranks,
                                                       std::int32_t per_rank_capacity) {
  GCMOE_CHECK_ARG(ranks >= 1, "admission needs >= 1 rank, got {}", ranks);
  GCMOE_CHECK_ARG(per_rank_capacity >= 1, "per-rank capacity must be >= 1, got {}",
                  per_rank_capacity);
  return std::unique_ptr<Admission>(new Admission(ranks, per_rank_capacity));
}

StatusOr<AdmissionTicket> Admission::admit(std::int64_t tokens) {
  std::lock_guard<std::mutex> const lock(mutex_);
  std::int64_t best = -1;
  for (std::size_t r = 0; r < shares_.size(); ++r) {
    RankShare const& s = shares_[r];
    if (s.requests >= per_rank_capacity_) {
      continue;
    }
    if (best < 0) {
      best = static_cast<std::int64_t>(r);
      continue;
    }
    RankShare const& b = shares_[static_cast<std::size_t>(best)];
    if (s.tokens < b.tokens || (s.tokens == b.tokens && s.requests < b.requests)) {
      best = static_cast<std::int64_t>(r);
    }
  }
  if (best < 0) {
    return resource_exhausted_error(
        fmt::format("all {} ranks are full ({} requests in flight each); retry later",
                    shares_.size(), per_rank_capacity_));
  }
  RankShare& chosen = shares_[static_cast<std::size_t>(best)];
  ++chosen.requests;
  chosen.tokens += tokens;
  return AdmissionTicket(this, static_cast<std::uint32_t>(best), tokens);
}

void Admission::release(std::uint32_t rank, std::int64_t tokens) {
  std::lock_guard<std::mutex> const lock(mutex_);
  RankShare& s = shares_[rank];
  --s.requests;
  s.tokens -= tokens;
}

std::vector<RankShare> Admission::shares() const {
  std::lock_guard<std::mutex> const lock(mutex_);
  return shares_;
}

std::int32_t Admission::in_flight() const {
  std::lock_guard<std::mutex> const lock(mutex_);
  std::int32_t n = 0;
  for (RankShare const& s : shares_) {
    n += s.requests;
  }
  return n;
}

}  // namespace gcmoe::frontend
