#include "tests/e2e/serving_scenarios.h"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/generate_client.h"
#include "tests/support/catch.h"

namespace gcmoe::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

v1::GenerateRequest long_request(std::string const& id, std::uint32_t tokens) {
  v1::GenerateRequest r = make_request(id, {1, 2, 3}, tokens, 5);
  r.mutable_stopping()->set_ignore_eos(true);
  return r;
}

std::future<StreamResult> stream_async(v1::GenerateService::Stub& stub, v1::GenerateRequest r,
                                       std::atomic<int>* started = nullptr) {
  return std::async(std::launch::async, [&stub, r, started] {
    return collect_generate(stub, r, milliseconds(60000),
                            [started](std::size_t n, grpc::ClientContext&) {
                              if (n == 1 && started != nullptr) {
                                ++*started;
                              }
                            });
  });
}

// The value of one series of /metrics text (`name{labels}` exactly as written there); 0 when it
// is absent, as a counter is before its first increment.
double metric_value(std::string const& metrics, std::string const& series) {
  std::string const prefix = series + " ";
  for (std::size_t at = 0; at < metrics.size();) {
    std::size_t const end = std::min(metrics.find('\n', at), metrics.size());
    if (metrics.compare(at, prefix.size(), prefix) == 0) {
      return std::stod(metrics.substr(at + prefix.size(), end - at - prefix.size()));
    }
    at = end + 1;
  }
  return 0.0;
}

// Calls `done` up to `tries` times, `period` apart, until it returns true; whether it did.
template <typename Done>
bool poll_until(int tries, milliseconds period, Done const& done) {
  for (int i = 0; i < tries; ++i) {
    if (done()) {
      return true;
    }
    std::this_thread::sleep_for(period);
  }
  return false;
}

// The ranks' loads as the front-end last polled them; nullopt when GetLoads fails.
std::optional<v1::GetLoadsResponse> get_loads(v1::GenerateService::Stub& stub) {
  grpc::ClientContext context;
  v1::GetLoadsResponse loads;
  if (!stub.GetLoads(&context, {}, &loads).ok()) {
    return std::nullopt;
  }
  return loads;
}

// Polls GetLoads until the ranks report a running request (the front-end's view of the ranks is
// a periodic poll); false if none shows within 5 s.
bool wait_ranks_running(v1::GenerateService::Stub& stub) {
  return poll_until(250, milliseconds(20), [&stub] {
    std::optional<v1::GetLoadsResponse> const loads = get_loads(stub);
    return loads.has_value() && loads->total().running_requests() > 0;
  });
}

void wait_started(std::atomic<int> const& started, int n) {
  poll_until(500, milliseconds(10), [&] { return started >= n; });
  REQUIRE(started == n);
}

}  // namespace

void check_cancel(v1::GenerateService::Stub& stub, int metrics_port, std::uint32_t long_tokens) {
  std::string const cancelled_calls = "gcmoe:request_error_total{code=\"CANCELLED\"}";
  std::string const metrics_before = fetch_metrics(metrics_port);
  REQUIRE_FALSE(metrics_before.empty());
  double const cancelled_before = metric_value(metrics_before, cancelled_calls);
  // Cancelled only once the ranks' loads show it running, so that the idle check below cannot
  // pass on a load snapshot taken before the request was admitted.
  bool seen_running = false;
  StreamResult const got =
      collect_generate(stub, long_request("cancel-me", long_tokens), std::nullopt,
                       [&stub, &seen_running](std::size_t n, grpc::ClientContext& c) {
                         if (n == 2) {
                           seen_running = wait_ranks_running(stub);
                           c.TryCancel();
                         }
                       });
  CHECK(seen_running);
  CHECK(got.status.error_code() == grpc::StatusCode::CANCELLED);
  CHECK(got.tokens.size() >= 2);
  CHECK(got.tokens.size() < long_tokens);
  // The client's cancel ends its call at once, before the server has read the reset: for a few
  // milliseconds (more under load) the front-end still holds the request, so the router still
  // counts its tokens on its rank, and the rank still reserves its KV. The next scenario would be
  // routed against that stale load (two long requests on one rank, the second queued behind the
  // first's thousands of tokens), so wait, bounded, until the server has let go: the front-end
  // has ended the call (it counts a call's error after releasing its admission), and the ranks
  // hold nothing — that part fails if a cancel leaks on a rank.
  bool const counted = poll_until(250, milliseconds(20), [&] {
    return metric_value(fetch_metrics(metrics_port), cancelled_calls) >= cancelled_before + 1;
  });
  CHECK(counted);
  check_ranks_idle(stub);
}

void check_abort_many(v1::GenerateService::Stub& stub, std::uint32_t long_tokens) {
  std::atomic<int> started{0};
  std::vector<std::future<StreamResult>> streams;
  streams.push_back(stream_async(stub, long_request("a", long_tokens), &started));
  streams.push_back(stream_async(stub, long_request("b", long_tokens), &started));
  streams.push_back(stream_async(stub, long_request("c", 20), &started));
  wait_started(started, 3);
  grpc::ClientContext context;
  v1::AbortRequest abort;
  abort.add_request_ids("a");
  abort.add_request_ids("b");
  abort.add_request_ids("nope");
  v1::AbortResponse response;
  REQUIRE(stub.Abort(&context, abort, &response).ok());
  CHECK(response.aborted_size() == 2);
  REQUIRE(response.not_found_size() == 1);
  CHECK(response.not_found(0) == "nope");
  for (std::size_t i = 0; i < streams.size(); ++i) {
    StreamResult const got = streams[i].get();
    REQUIRE(got.status.ok());
    REQUIRE(got.finished.has_value());
    CHECK(got.finished->reason() == (i < 2 ? v1::FINISH_REASON_ABORTED : v1::FINISH_REASON_LENGTH));
    CHECK(got.finished->completion_tokens() == got.tokens.size());
    if (i < 2) {
      CHECK(got.tokens.size() < long_tokens);
    }
  }
}

void check_deadline(v1::GenerateService::Stub& stub, std::uint32_t long_tokens) {
  auto const start = Clock::now();
  StreamResult const got =
      collect_generate(stub, long_request("slow", long_tokens), milliseconds(300));
  CHECK(got.status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED);
  CHECK(Clock::now() - start < seconds(3));
}

void check_ranks_idle(v1::GenerateService::Stub& stub) {
  // Whatever was cancelled or aborted left the ranks: nothing runs, waits or holds KV.
  bool const idle = poll_until(100, milliseconds(50), [&stub] {
    std::optional<v1::GetLoadsResponse> const loads = get_loads(stub);
    return loads.has_value() && loads->total().running_requests() == 0 &&
           loads->total().waiting_requests() == 0 && loads->total().kv_blocks_reserved() == 0;
  });
  CHECK(idle);
}

void check_full_queue(v1::GenerateService::Stub& stub, int requests, std::uint32_t max_new_tokens) {
  std::vector<std::future<StreamResult>> streams;
  for (int i = 0; i < requests; ++i) {
    v1::GenerateRequest r = make_request("q" + std::to_string(i), {1, 2}, max_new_tokens, 3);
    r.mutable_stopping()->set_ignore_eos(true);
    streams.push_back(stream_async(stub, r));
  }
  int served = 0;
  int refused = 0;
  for (auto& s : streams) {
    StreamResult const got = s.get();
    if (got.status.ok()) {
      ++served;
      CHECK(got.tokens.size() == max_new_tokens);
      CHECK(got.finished.has_value());
    } else {
      INFO(got.status.error_message());
      CHECK(got.status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
      CHECK(got.messages == 0);
      ++refused;
    }
  }
  std::printf("e2e: full queue: %d served, %d RESOURCE_EXHAUSTED\n", served, refused);
  CHECK(served + refused == requests);
  CHECK(served >= 4);
  CHECK(refused >= 1);
}

void check_malformed(v1::GenerateService::Stub& stub, std::uint32_t vocab_size,
                     std::uint32_t max_context_tokens) {
  auto const valid = [] { return make_request("m", {1, 2, 3}, 4, 1); };
  std::vector<std::pair<std::string, v1::GenerateRequest>> bad;
  auto add = [&](std::string what, auto&& edit) {
    v1::GenerateRequest r = valid();
    edit(r);
    bad.emplace_back(std::move(what), r);
  };
  std::uint32_t const vocab = vocab_size;
  std::uint32_t const context = max_context_tokens;
  add("empty prompt", [](auto& r) { r.clear_prompt_token_ids(); });
  add("no stopping", [](auto& r) { r.clear_stopping(); });
  add("max_new_tokens 0", [](auto& r) { r.mutable_stopping()->set_max_new_tokens(0); });
  add("prompt token = vocab", [vocab](auto& r) { r.add_prompt_token_ids(vocab); });
  add("prompt token huge", [](auto& r) { r.add_prompt_token_ids(4000000000u); });
  add("stop token outside vocab",
      [vocab](auto& r) { r.mutable_stopping()->add_stop_token_ids(vocab + 35); });
  add("65 stop tokens", [](auto& r) {
    for (int i = 0; i < 65; ++i) {
      r.mutable_stopping()->add_stop_token_ids(1);
    }
  });
  add("prompt + max_new_tokens over the context",
      [context](auto& r) { r.mutable_stopping()->set_max_new_tokens(context - 2); });
  add("max_new_tokens huge",
      [](auto& r) { r.mutable_stopping()->set_max_new_tokens(4000000000u); });
  add("temperature -1", [](auto& r) { r.mutable_sampling()->set_temperature(-1.0f); });
  add("temperature NaN", [](auto& r) { r.mutable_sampling()->set_temperature(std::nanf("")); });
  add("temperature inf", [](auto& r) { r.mutable_sampling()->set_temperature(INFINITY); });
  add("top_k -1", [](auto& r) { r.mutable_sampling()->set_top_k(-1); });
  add("top_p 0", [](auto& r) { r.mutable_sampling()->set_top_p(0.0f); });
  add("top_p 1.5", [](auto& r) { r.mutable_sampling()->set_top_p(1.5f); });
  add("min_p -0.1", [](auto& r) { r.mutable_sampling()->set_min_p(-0.1f); });
  add("min_p 2", [](auto& r) { r.mutable_sampling()->set_min_p(2.0f); });
  add("repetition_penalty 0", [](auto& r) { r.mutable_sampling()->set_repetition_penalty(0.0f); });
  add("frequency_penalty 3", [](auto& r) { r.mutable_sampling()->set_frequency_penalty(3.0f); });
  add("presence_penalty -3", [](auto& r) { r.mutable_sampling()->set_presence_penalty(-3.0f); });
  add("request id with a space", [](auto& r) { r.set_request_id("a b"); });
  add("request id too long", [](auto& r) { r.set_request_id(std::string(129, 'x')); });
  add("request id control byte", [](auto& r) { r.set_request_id("a\x01"); });
  REQUIRE(bad.size() >= 20);
  for (auto const& [what, request] : bad) {
    StreamResult const got = collect_generate(stub, request, milliseconds(10000));
    INFO(what << ": " << got.status.error_message());
    CHECK(got.status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK(got.messages == 0);
  }
  // The server still serves.
  StreamResult const ok = collect_generate(stub, valid(), milliseconds(10000));
  CHECK(ok.status.ok());
  std::printf("e2e: %zu malformed requests, each INVALID_ARGUMENT\n", bad.size());
}

void check_drain_completes(ServeProcess& serve, std::shared_ptr<grpc::Channel> const& channel,
                           std::uint32_t tokens) {
  auto stub = v1::GenerateService::NewStub(channel);
  std::atomic<int> started{0};
  std::vector<std::future<StreamResult>> streams;
  for (int i = 0; i < 4; ++i) {
    streams.push_back(stream_async(*stub, long_request("d" + std::to_string(i), tokens), &started));
  }
  wait_started(started, 4);
  ::kill(serve.pid(), SIGTERM);
  std::this_thread::sleep_for(milliseconds(100));
  CHECK_FALSE(is_ready(channel));
  StreamResult const refused =
      collect_generate(*stub, make_request("late", {1}, 2, 1), milliseconds(5000));
  CHECK(refused.status.error_code() == grpc::StatusCode::UNAVAILABLE);
  for (auto& s : streams) {
    StreamResult const got = s.get();
    INFO(got.status.error_message());
    REQUIRE(got.status.ok());
    CHECK(got.tokens.size() == tokens);
  }
  std::optional<int> const exit_code = serve.stop(SIGTERM, seconds(15));
  REQUIRE(exit_code.has_value());
  CHECK(*exit_code == 0);
}

void check_drain_past_timeout(ServeProcess& serve, v1::GenerateService::Stub& stub,
                              std::uint32_t long_tokens) {
  std::atomic<int> started{0};
  auto stream = stream_async(stub, long_request("long", long_tokens), &started);
  wait_started(started, 1);
  auto const start = Clock::now();
  std::optional<int> const exit_code = serve.stop(SIGTERM, seconds(15));
  REQUIRE(exit_code.has_value());
  CHECK(*exit_code == 0);
  CHECK(Clock::now() - start < seconds(8));
  StreamResult const got = stream.get();
  CHECK_FALSE(got.status.ok());
  CHECK(got.tokens.size() < long_tokens);
  std::printf("e2e: past the shutdown timeout the stream ended with %d '%s'\n",
              static_cast<int>(got.status.error_code()), got.status.error_message().c_str());
}

}  // namespace gcmoe::testing
