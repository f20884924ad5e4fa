#pragma once
// The load generator proper: sends requests over one gRPC channel at the arrival schedule's
// times, at most `streams` in flight (one client thread per in-flight stream, like vLLM's
// --max-concurrency semaphore: a request that arrives while all are busy waits for the next free
// one and its latency is measured from when it is actually sent), and records each request's
// outcome with its token-chunk arrival times.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "client/arrival_schedule.h"
#include "client/bench_config.h"
#include "client/bench_metrics.h"
#include "client/progress_bar.h"
#include "client/request_generator.h"
#include "gcmoe/v1/generate.grpc.pb.h"

namespace gcmoe::client {

struct RunPlan {
  std::int64_t streams = 1;           // client threads = requests in flight at most
  std::optional<std::int64_t> count;  // requests to send; unset: until `duration_s`
  std::optional<double> duration_s;   // stop sending after this many seconds
  std::string request_id_prefix;      // ids are prefix + request index
};

struct RunResult {
  std::vector<RequestOutcome> outcomes;  // in request-index order
  double duration_s = 0.0;               // first send to the last request's end
};

// The GenerateRequest the benchmark sends for `request`.
v1::GenerateRequest make_generate_request(BenchConfig const& config, BenchRequest const& request,
                                          std::string const& request_id);

// `schedule` null: every request is due at once. Blocks until every sent request has ended.
RunResult run_requests(v1::GenerateService::Stub& stub, BenchConfig const& config,
                       RunPlan const& plan, RandomRequestGenerator& generator,
                       ArrivalSchedule* schedule, ProgressBar& progress);

}  // namespace gcmoe::client
