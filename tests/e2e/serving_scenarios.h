#pragma once
// Serving scenarios shared by the e2e tests of the test-double ranks (serve_group_e2e_test.cc)
// and of the embedded model (serve_model_e2e_test.cc). Each runs against a server the caller
// started and checks with Catch assertions. `long_tokens` is a max_new_tokens long enough that a
// request is still running after a few hundred milliseconds on that server.

#include <grpcpp/channel.h>

#include <cstdint>
#include <memory>

#include "gcmoe/v1/generate.grpc.pb.h"
#include "tests/e2e/serve_process.h"

namespace gcmoe::testing {

// On an idle server, client cancel once two tokens came and the ranks report the request:
// CANCELLED, the stream stops early, and within a few seconds the server lets go of it — the
// front-end ends the call (counted CANCELLED on /metrics at `metrics_port`) and no rank runs,
// queues or reserves anything.
void check_cancel(v1::GenerateService::Stub& stub, int metrics_port, std::uint32_t long_tokens);
// Abort of two running ids and one unknown: the two end with FINISH_REASON_ABORTED, a third
// request runs to its length.
void check_abort_many(v1::GenerateService::Stub& stub, std::uint32_t long_tokens);
// A 300 ms deadline on a long request: DEADLINE_EXCEEDED within seconds.
void check_deadline(v1::GenerateService::Stub& stub, std::uint32_t long_tokens);
// Within a few seconds no rank runs, queues or reserves anything.
void check_ranks_idle(v1::GenerateService::Stub& stub);
// A burst of `requests` on a server with room for 4 in flight (1 rank, --max-running 2,
// --max-waiting 2): each served one has all its tokens, the others RESOURCE_EXHAUSTED with no
// message, and nothing else.
void check_full_queue(v1::GenerateService::Stub& stub, int requests, std::uint32_t max_new_tokens);
// At least 20 malformed requests, each INVALID_ARGUMENT with no message; then a valid one works.
void check_malformed(v1::GenerateService::Stub& stub, std::uint32_t vocab_size,
                     std::uint32_t max_context_tokens);
// SIGTERM with requests in flight and a long --shutdown-timeout: readiness NOT_SERVING, new
// requests UNAVAILABLE, the in-flight ones complete, exit 0.
void check_drain_completes(ServeProcess& serve, std::shared_ptr<grpc::Channel> const& channel,
                           std::uint32_t tokens);
// SIGTERM with a request longer than a short --shutdown-timeout: it ends with an error status
// and the server exits 0 soon after the timeout.
void check_drain_past_timeout(ServeProcess& serve, v1::GenerateService::Stub& stub,
                              std::uint32_t long_tokens);

}  // namespace gcmoe::testing
