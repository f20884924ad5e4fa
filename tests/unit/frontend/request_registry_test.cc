#include "server/frontend/request_registry.h"

#include <set>
#include <thread>
#include <vector>

#include "tests/support/catch.h"

namespace gcmoe::frontend {
namespace {

TEST_CASE("a request id is unique while in flight and free again after") {
  RequestRegistry registry;
  {
    StatusOr<RequestIdLease> a = registry.claim("a");
    REQUIRE(a.ok());
    CHECK(a->id() == "a");
    CHECK(registry.contains("a"));
    Status const dup = registry.claim("a").status();
    CHECK(dup.code() == StatusCode::kInvalidArgument);
    CHECK(dup.message().find("'a' is already in flight") != std::string::npos);
    RequestIdLease moved = std::move(a).value();
    CHECK(registry.size() == 1);  // moving keeps one claim
  }
  CHECK_FALSE(registry.contains("a"));
  CHECK(registry.size() == 0);
  CHECK(registry.claim("a").ok());
}

TEST_CASE("empty ids are assigned, never colliding with client ids") {
  RequestRegistry registry;
  StatusOr<RequestIdLease> taken = registry.claim("gcmoe-1");
  REQUIRE(taken.ok());
  StatusOr<RequestIdLease> assigned = registry.claim("");
  REQUIRE(assigned.ok());
  CHECK(assigned->id() == "gcmoe-2");
  StatusOr<RequestIdLease> next = registry.claim("");
  REQUIRE(next.ok());
  CHECK(next->id() == "gcmoe-3");
}

TEST_CASE("concurrent claims of one id: exactly one wins") {
  RequestRegistry registry;
  std::vector<RequestIdLease> winners(8);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < winners.size(); ++i) {
    threads.emplace_back([&, i] {
      StatusOr<RequestIdLease> lease = registry.claim("same");
      if (lease.ok()) {
        winners[i] = std::move(lease).value();
      }
    });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  int won = 0;
  for (RequestIdLease const& w : winners) {
    won += w.id() == "same" ? 1 : 0;
  }
  CHECK(won == 1);
  CHECK(registry.size() == 1);
}

}  // namespace
}  // namespace gcmoe::frontend
