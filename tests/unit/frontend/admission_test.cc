#include "server/frontend/admission.h"

#include <atomic>
#include <thread>
#include <vector>

#include "tests/support/catch.h"

namespace gcmoe::frontend {
namespace {

std::unique_ptr<Admission> make(std::uint32_t ranks, std::int32_t capacity) {
  auto made = Admission::create(ranks, capacity);
  REQUIRE(made.ok());
  return std::move(made).value();
}

TEST_CASE("Admission routes to the least-loaded rank by reserved tokens, then requests") {
  auto admission = make(3, 4);
  std::vector<AdmissionTicket> tickets;
  auto admit = [&](std::int64_t tokens) {
    StatusOr<AdmissionTicket> t = admission->admit(tokens);
    REQUIRE(t.ok());
    std::uint32_t const rank = t->rank();
    tickets.push_back(std::move(t).value());
    return rank;
  };
  CHECK(admit(100) == 0);  // all empty: lowest rank
  CHECK(admit(10) == 1);
  CHECK(admit(10) == 2);
  CHECK(admit(5) == 1);  // ranks 1 and 2 tie (10 tokens, 1 request): the lower rank
  CHECK(admit(1) == 2);  // rank 2: 10 < rank 1's 15
  auto const shares = admission->shares();
  CHECK(shares[0].tokens == 100);
  CHECK(shares[1].tokens == 15);
  CHECK(shares[2].tokens == 11);
  CHECK(admission->in_flight() == 5);
  tickets.erase(tickets.begin());  // rank 0's request ends
  CHECK(admission->shares()[0].requests == 0);
  CHECK(admit(1) == 0);
}

TEST_CASE("Admission refuses with RESOURCE_EXHAUSTED only when every rank is full") {
  auto admission = make(2, 2);
  std::vector<AdmissionTicket> tickets;
  for (int i = 0; i < 4; ++i) {
    StatusOr<AdmissionTicket> t = admission->admit(1);
    REQUIRE(t.ok());
    tickets.push_back(std::move(t).value());
  }
  StatusOr<AdmissionTicket> const full = admission->admit(1);
  CHECK(full.status().code() == StatusCode::kResourceExhausted);
  tickets.pop_back();
  CHECK(admission->admit(1).ok());  // the ticket of the temporary is released at once
  CHECK(admission->in_flight() == 3);
  CHECK(admission->capacity() == 4);
}

TEST_CASE("Admission: concurrent admits never exceed the capacity and release everything") {
  auto admission = make(4, 8);
  std::atomic<int> admitted{0};
  std::atomic<int> refused{0};
  std::atomic<int> peak_violation{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 500; ++i) {
        StatusOr<AdmissionTicket> ticket = admission->admit(i % 7);
        if (ticket.ok()) {
          ++admitted;
          if (admission->in_flight() > admission->capacity()) {
            ++peak_violation;
          }
        } else {
          ++refused;
        }
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  CHECK(admitted + refused == 4000);
  CHECK(peak_violation == 0);
  CHECK(admission->in_flight() == 0);
  for (RankShare const& s : admission->shares()) {
    CHECK(s.tokens == 0);
  }
}

TEST_CASE("Admission rejects bad limits") {
  CHECK(Admission::create(0, 1).status().code() == StatusCode::kInvalidArgument);
  CHECK(Admission::create(1, 0).status().code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gcmoe::frontend
