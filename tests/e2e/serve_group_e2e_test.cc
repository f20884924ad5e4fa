// `gcmoe serve` with N rank processes end to end, through a real gRPC client: concurrent streams
// equal to a single-process decode, cancel / Abort / deadlines, a full queue, malformed requests,
// a killed rank and SIGTERM drain. The ranks are the product's worker code hosting the TEST
// DOUBLE StepModel (gcmoe_test_worker), so these run without a model family; the same scenarios
// against the embedded model are serve_model_e2e_test.cc.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <map>
#include <thread>

#include "engine/runtime/single_rank_communicator.h"
#include "tests/e2e/generate_client.h"
#include "tests/e2e/reference_decode.h"
#include "tests/e2e/serve_process.h"
#include "tests/e2e/serving_scenarios.h"
#include "tests/support/catch.h"
#include "tests/unit/runtime/test_step_model.h"

extern char** environ;

namespace gcmoe {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::collect_generate;
using testing::make_request;
using testing::StreamResult;
using Clock = std::chrono::steady_clock;

constexpr int kKvBlocks = 256;
constexpr int kKvBlockSize = 4;

std::unique_ptr<testing::ServeProcess> start_serve(int ranks, int step_delay_us,
                                                   std::vector<std::string> extra = {}) {
  ::setenv("GCMOE_TEST_STEP_DELAY_US", std::to_string(step_delay_us).c_str(), 1);
  std::vector<std::string> args = {"--ranks",
                                   std::to_string(ranks),
                                   "--model",
                                   "test-double",
                                   "--worker-binary",
                                   GCMOE_TEST_WORKER,
                                   "--kv-blocks",
                                   std::to_string(kKvBlocks),
                                   "--kv-block-size",
                                   std::to_string(kKvBlockSize),
                                   "--collective-timeout-ms",
                                   "5000"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto serve = std::make_unique<testing::ServeProcess>(GCMOE_BINARY, args, seconds(20));
  return serve;
}

std::vector<std::uint32_t> prompt_of(std::size_t i) {
  std::vector<std::uint32_t> prompt;
  for (std::size_t t = 0; t < 2 + (i * 5) % 23; ++t) {
    prompt.push_back(static_cast<std::uint32_t>((i * 11 + t * 3) % 62));
  }
  return prompt;
}

std::map<std::string, testing::ReferenceOutput> reference(
    std::vector<v1::GenerateRequest> const& requests) {
  runtime::SingleRankCommunicator comm;
  testing::TestStepModelOptions options;
  options.kv_blocks = kKvBlocks;
  options.kv_block_size = kKvBlockSize;
  testing::TestStepModel model(options, comm);
  return testing::reference_decode(model, comm, requests, kKvBlocks, kKvBlockSize);
}

TEST_CASE("serve, N ranks: concurrent streams equal the single-process decode") {
  int const ranks = GENERATE(1, 2, 4);
  auto serve = start_serve(ranks, 0);
  auto channel = testing::connect_channel(serve->address());
  REQUIRE(testing::wait_ready(channel, seconds(20)));
  auto stub = v1::GenerateService::NewStub(channel);

  grpc::ClientContext info_context;
  v1::GetModelInfoResponse info;
  REQUIRE(stub->GetModelInfo(&info_context, {}, &info).ok());
  CHECK(info.model_type() == "test_double");
  CHECK(info.vocab_size() == 64);

  std::vector<v1::GenerateRequest> requests;
  for (std::size_t i = 0; i < 24; ++i) {
    v1::GenerateRequest r =
        make_request("req-" + std::to_string(i), prompt_of(i),
                     4 + static_cast<std::uint32_t>(i % 13), 100 + i, i % 3 == 0 ? 0.0f : 0.9f);
    if (i % 4 == 1) {
      r.mutable_sampling()->set_top_k(8);
      r.mutable_sampling()->set_repetition_penalty(1.2f);
    }
    r.mutable_stopping()->set_ignore_eos(i % 2 == 0);
    requests.push_back(r);
  }
  std::vector<std::future<StreamResult>> streams;
  for (v1::GenerateRequest const& r : requests) {
    streams.push_back(std::async(std::launch::async, [&stub, r] {
      return collect_generate(*stub, r, milliseconds(30000));
    }));
  }
  auto const expected = reference(requests);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    StreamResult const got = streams[i].get();
    std::string const& id = requests[i].request_id();
    INFO(id << ": " << got.status.error_message());
    REQUIRE(got.status.ok());
    REQUIRE(got.finished.has_value());
    CHECK(got.tokens == expected.at(id).tokens);
    CHECK(got.finished->reason() == expected.at(id).reason);
    CHECK(got.finished->completion_tokens() == got.tokens.size());
    CHECK(got.finished->prompt_tokens() ==
          static_cast<std::uint32_t>(requests[i].prompt_token_ids_size()));
    CHECK(got.finished->timing().time_to_first_token_seconds() > 0.0);
  }
  std::printf("e2e: %d ranks served %zu concurrent streams equal to the reference\n", ranks,
              requests.size());

  grpc::ClientContext loads_context;
  v1::GetLoadsResponse loads;
  REQUIRE(stub->GetLoads(&loads_context, {}, &loads).ok());
  CHECK(loads.ranks_size() == ranks);
  // The supervisor polls the ranks' step counters every 100 ms.
  std::string metrics;
  for (int i = 0; i < 40; ++i) {
    metrics = testing::fetch_metrics(serve->metrics_port());
    if (metrics.find("gcmoe:rank_step_seconds_total{rank=\"0\"}") != std::string::npos) {
      break;
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
  CHECK(metrics.find("gcmoe:time_to_first_token_seconds_count 24") != std::string::npos);
  CHECK(metrics.find("gcmoe:e2e_request_latency_seconds_count 24") != std::string::npos);
  CHECK(metrics.find("gcmoe:inter_token_latency_seconds_bucket") != std::string::npos);
  CHECK(metrics.find("gcmoe:kv_cache_usage_perc") != std::string::npos);
  CHECK(metrics.find("gcmoe:rank_step_seconds_total{rank=\"0\"}") != std::string::npos);

  std::optional<int> const exit_code = serve->stop(SIGTERM, seconds(15));
  REQUIRE(exit_code.has_value());
  CHECK(*exit_code == 0);
}

TEST_CASE("serve: client cancel, Abort of many ids and deadlines") {
  auto serve = start_serve(2, 20000);
  auto channel = testing::connect_channel(serve->address());
  REQUIRE(testing::wait_ready(channel, seconds(20)));
  auto stub = v1::GenerateService::NewStub(channel);
  SECTION("cancel") {
    testing::check_cancel(*stub, serve->metrics_port(), 400);
  }
  SECTION("Abort") {
    testing::check_abort_many(*stub, 400);
  }
  SECTION("deadline") {
    testing::check_deadline(*stub, 400);
  }
  testing::check_ranks_idle(*stub);
}

TEST_CASE("serve: a full queue is RESOURCE_EXHAUSTED and nothing admitted is lost") {
  auto serve = start_serve(1, 10000, {"--max-running", "2", "--max-waiting", "2"});
  auto channel = testing::connect_channel(serve->address());
  REQUIRE(testing::wait_ready(channel, seconds(20)));
  auto stub = v1::GenerateService::NewStub(channel);
  testing::check_full_queue(*stub, 16, 10);
}

TEST_CASE("serve: malformed requests are each INVALID_ARGUMENT") {
  auto serve = start_serve(1, 0);
  auto channel = testing::connect_channel(serve->address());
  REQUIRE(testing::wait_ready(channel, seconds(20)));
  auto stub = v1::GenerateService::NewStub(channel);
  testing::check_malformed(*stub, 64, 512);
}

// A rank fault of either kind: the process dies (SIGKILL) or freezes (SIGSTOP: alive, silent).
TEST_CASE("serve: a failed rank ends in-flight requests within 5 s; the group serves again") {
  auto const [fault, fault_name] =
      GENERATE(table<int, char const*>({{SIGKILL, "killed"}, {SIGSTOP, "frozen"}}));
  auto serve = start_serve(2, 20000);
  auto channel = testing::connect_channel(serve->address());
  REQUIRE(testing::wait_ready(channel, seconds(20)));
  auto stub = v1::GenerateService::NewStub(channel);
  std::atomic<int> started{0};
  std::vector<std::future<StreamResult>> streams;
  for (int i = 0; i < 4; ++i) {
    v1::GenerateRequest r = make_request("k" + std::to_string(i), {1, 2}, 400, 3);
    r.mutable_stopping()->set_ignore_eos(true);
    streams.push_back(std::async(std::launch::async, [&stub, &started, r] {
      return collect_generate(*stub, r, milliseconds(60000),
                              [&started](std::size_t n, grpc::ClientContext&) {
                                if (n == 1) {
                                  ++started;
                                }
                              });
    }));
  }
  for (int i = 0; i < 200 && started < 4; ++i) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  REQUIRE(started == 4);
  std::vector<pid_t> const workers = serve->children();
  REQUIRE(workers.size() == 2);
  auto const killed_at = Clock::now();
  ::kill(workers[1], fault);
  for (auto& s : streams) {
    REQUIRE(s.wait_for(seconds(5)) == std::future_status::ready);
    StreamResult const got = s.get();
    INFO(got.status.error_message());
    CHECK(got.status.error_code() == grpc::StatusCode::UNAVAILABLE);
    CHECK_FALSE(got.finished.has_value());
  }
  double const ended_s = std::chrono::duration<double>(Clock::now() - killed_at).count();
  std::printf("e2e: rank %s; every in-flight stream ended UNAVAILABLE within %.3f s\n", fault_name,
              ended_s);
  CHECK(ended_s < 5.0);
  // Not ready while the group restarts (at least the 500 ms back-off), then ready again.
  bool went_down = false;
  for (int i = 0; i < 100 && !went_down; ++i) {
    went_down = !testing::is_ready(channel);
    std::this_thread::sleep_for(milliseconds(20));
  }
  CHECK(went_down);
  REQUIRE(testing::wait_ready(channel, seconds(30)));
  CHECK(serve->children() != workers);
  std::printf("e2e: the group restarted and is ready again after %.3f s\n",
              std::chrono::duration<double>(Clock::now() - killed_at).count());
  std::vector<v1::GenerateRequest> const again = {make_request("after", {7, 8, 9}, 6, 11)};
  StreamResult const got = collect_generate(*stub, again[0], milliseconds(20000));
  REQUIRE(got.status.ok());
  CHECK(got.tokens == reference(again).at("after").tokens);
}

TEST_CASE("serve: SIGTERM drains in-flight requests, then exits") {
  SECTION("within --shutdown-timeout: requests finish") {
    auto serve = start_serve(2, 10000, {"--shutdown-timeout", "20"});
    auto channel = testing::connect_channel(serve->address());
    REQUIRE(testing::wait_ready(channel, seconds(20)));
    testing::check_drain_completes(*serve, channel, 30);
  }
  SECTION("past --shutdown-timeout: the rest is ended with a status") {
    auto serve = start_serve(1, 20000, {"--shutdown-timeout", "0.5"});
    auto channel = testing::connect_channel(serve->address());
    REQUIRE(testing::wait_ready(channel, seconds(20)));
    auto stub = v1::GenerateService::NewStub(channel);
    testing::check_drain_past_timeout(*serve, *stub, 400);
  }
}

// Ranks started by another launcher (rank and size from OMPI_COMM_WORLD_* as under mpirun, or
// SLURM_PROCID / SLURM_NTASKS as under srun), served by `gcmoe serve --attach`.
TEST_CASE("serve --attach: ranks started by mpirun's or srun's environment") {
  std::string dir_template = "/tmp/gcmoe-attach-XXXXXX";
  REQUIRE(::mkdtemp(dir_template.data()) != nullptr);
  std::string const dir = dir_template;
  std::vector<pid_t> workers;
  for (int rank = 0; rank < 2; ++rank) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      env.emplace_back(*e);
    }
    // Rank 0 as mpirun starts it, rank 1 as srun does.
    if (rank == 0) {
      env.push_back("OMPI_COMM_WORLD_RANK=0");
      env.push_back("OMPI_COMM_WORLD_SIZE=2");
    } else {
      env.push_back("SLURM_PROCID=1");
      env.push_back("SLURM_NTASKS=2");
    }
    env.push_back("GCMOE_SOCKET_DIR=" + dir);
    env.push_back("GCMOE_SHM_NAME=/gcmoe-e2e-attach-" + std::to_string(::getpid()));
    env.push_back("GCMOE_TEST_STEP_DELAY_US=0");
    std::vector<std::string> args = {GCMOE_TEST_WORKER, "worker",
                                     "--model",         "test-double",
                                     "--kv-blocks",     std::to_string(kKvBlocks),
                                     "--kv-block-size", std::to_string(kKvBlockSize)};
    std::vector<char*> argv;
    for (std::string& a : args) {
      argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (std::string& e : env) {
      envp.push_back(e.data());
    }
    envp.push_back(nullptr);
    pid_t pid = -1;
    REQUIRE(::posix_spawn(&pid, GCMOE_TEST_WORKER, nullptr, nullptr, argv.data(), envp.data()) ==
            0);
    workers.push_back(pid);
  }
  {
    testing::ServeProcess serve(GCMOE_BINARY, {"--ranks", "2", "--attach", dir, "--model", "mpi"},
                                seconds(20));
    auto channel = testing::connect_channel(serve.address());
    REQUIRE(testing::wait_ready(channel, seconds(20)));
    auto stub = v1::GenerateService::NewStub(channel);
    std::vector<v1::GenerateRequest> requests;
    for (std::size_t i = 0; i < 6; ++i) {
      requests.push_back(make_request("mpi-" + std::to_string(i), prompt_of(i), 8, 50 + i, 0.7f));
    }
    std::vector<std::future<StreamResult>> streams;
    for (auto const& r : requests) {
      streams.push_back(std::async(std::launch::async, [&stub, r] {
        return collect_generate(*stub, r, milliseconds(20000));
      }));
    }
    auto const expected = reference(requests);
    for (std::size_t i = 0; i < requests.size(); ++i) {
      StreamResult const got = streams[i].get();
      REQUIRE(got.status.ok());
      CHECK(got.tokens == expected.at(requests[i].request_id()).tokens);
    }
    std::optional<int> const exit_code = serve.stop(SIGTERM, seconds(15));
    REQUIRE(exit_code.has_value());
    CHECK(*exit_code == 0);
  }
  // The ranks belong to their launcher: they outlive the front-end and stop on its signal.
  for (pid_t const pid : workers) {
    ::kill(pid, SIGTERM);
  }
  for (pid_t const pid : workers) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}

}  // namespace
}  // namespace gcmoe
