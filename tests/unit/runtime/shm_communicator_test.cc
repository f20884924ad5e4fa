#include "engine/runtime/shm_communicator.h"

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "tests/support/catch.h"

namespace gcmoe::runtime {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

ShmCommunicatorOptions options_for(std::string const& tag, std::int32_t rank, std::int32_t world,
                                   milliseconds timeout = milliseconds(5000)) {
  ShmCommunicatorOptions o;
  o.name = "/gcmoe-test-" + tag + "-" + std::to_string(::getpid());
  o.session = 7;
  o.rank = rank;
  o.world_size = world;
  o.slot_bytes = 1 << 16;
  o.timeout = timeout;
  o.join_timeout = timeout;
  return o;
}

// Creates every rank of a group on its own thread (create() blocks until all joined).
std::vector<std::unique_ptr<ShmCommunicator>> make_group(std::string const& tag, int world,
                                                         milliseconds timeout) {
  std::vector<std::unique_ptr<ShmCommunicator>> comms(static_cast<std::size_t>(world));
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      auto made = ShmCommunicator::create(options_for(tag, r, world, timeout));
      if (made.ok()) {
        comms[static_cast<std::size_t>(r)] = std::move(made).value();
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  for (auto const& c : comms) {
    REQUIRE(c != nullptr);
  }
  return comms;
}

TEST_CASE("ShmCommunicator: all_gather, all_reduce_sum and barrier across threads") {
  constexpr int kWorld = 4;
  constexpr int kRounds = 300;
  auto comms = make_group("ops", kWorld, milliseconds(5000));
  // Joined: the name is gone from /dev/shm, the mappings live on.
  CHECK_FALSE(std::filesystem::exists("/dev/shm" + options_for("ops", 0, kWorld).name));
  std::vector<int> failures(kWorld, 0);
  std::vector<std::thread> threads;
  for (int r = 0; r < kWorld; ++r) {
    threads.emplace_back([&, r] {
      ShmCommunicator& c = *comms[static_cast<std::size_t>(r)];
      for (int round = 0; round < kRounds; ++round) {
        // Rank r contributes (r + round) % 5 bytes, each = r * 16 + round % 16.
        std::vector<std::byte> mine(static_cast<std::size_t>((r + round) % 5),
                                    static_cast<std::byte>(r * 16 + round % 16));
        std::vector<std::byte> all;
        std::vector<std::size_t> sizes;
        if (!c.all_gather(mine, all, sizes).ok()) {
          ++failures[static_cast<std::size_t>(r)];
          continue;
        }
        std::size_t offset = 0;
        for (int q = 0; q < kWorld; ++q) {
          std::size_t const n = static_cast<std::size_t>((q + round) % 5);
          if (sizes[static_cast<std::size_t>(q)] != n) {
            ++failures[static_cast<std::size_t>(r)];
          }
          for (std::size_t i = 0; i < n && offset + i < all.size(); ++i) {
            if (all[offset + i] != static_cast<std::byte>(q * 16 + round % 16)) {
              ++failures[static_cast<std::size_t>(r)];
            }
          }
          offset += n;
        }
        std::vector<float> v = {static_cast<float>(r), 1.0f, static_cast<float>(round)};
        if (!c.all_reduce_sum(v).ok() || v[0] != 6.0f || v[1] != 4.0f ||
            v[2] != 4.0f * static_cast<float>(round)) {
          ++failures[static_cast<std::size_t>(r)];
        }
        if (!c.barrier().ok()) {
          ++failures[static_cast<std::size_t>(r)];
        }
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  for (int r = 0; r < kWorld; ++r) {
    CHECK(failures[static_cast<std::size_t>(r)] == 0);
  }
}

TEST_CASE("ShmCommunicator: contributions larger than a slot take several rounds") {
  constexpr int kWorld = 3;
  auto comms = make_group("big", kWorld, milliseconds(5000));
  // Slots are 64 KiB: rank 0 sends 200 000 bytes (4 rounds), rank 1 none, rank 2 70 000.
  std::vector<std::size_t> const lengths = {200000, 0, 70000};
  std::vector<int> failures(kWorld, 0);
  std::vector<std::thread> threads;
  for (int r = 0; r < kWorld; ++r) {
    threads.emplace_back([&, r] {
      for (int round = 0; round < 3; ++round) {
        std::vector<std::byte> mine(lengths[static_cast<std::size_t>(r)]);
        for (std::size_t i = 0; i < mine.size(); ++i) {
          mine[i] = static_cast<std::byte>((i * 7 + static_cast<std::size_t>(r + round)) % 251);
        }
        std::vector<std::byte> all;
        std::vector<std::size_t> sizes;
        int& bad = failures[static_cast<std::size_t>(r)];
        if (!comms[r]->all_gather(mine, all, sizes).ok() || sizes != lengths ||
            all.size() != 270000) {
          ++bad;
          continue;
        }
        std::size_t offset = 0;
        for (int q = 0; q < kWorld; ++q) {
          for (std::size_t i = 0; i < lengths[static_cast<std::size_t>(q)]; ++i) {
            if (all[offset + i] !=
                static_cast<std::byte>((i * 7 + static_cast<std::size_t>(q + round)) % 251)) {
              ++bad;
              break;
            }
          }
          offset += lengths[static_cast<std::size_t>(q)];
        }
        std::vector<float> v(40000, static_cast<float>(r));  // 160 KB: also multi-round
        if (!comms[r]->all_reduce_sum(v).ok() || v.front() != 3.0f || v.back() != 3.0f) {
          ++bad;
        }
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  for (int r = 0; r < kWorld; ++r) {
    CHECK(failures[static_cast<std::size_t>(r)] == 0);
  }
}

TEST_CASE("ShmCommunicator: bad options are errors") {
  CHECK(ShmCommunicator::create(options_for("bad", 2, 2)).status().code() ==
        StatusCode::kInvalidArgument);
  ShmCommunicatorOptions bad_name = options_for("bad", 0, 1);
  bad_name.name = "no-slash";
  CHECK(ShmCommunicator::create(bad_name).status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("ShmCommunicator: a rank that never joins is a deadline error, not a hang") {
  auto const start = Clock::now();
  auto made = ShmCommunicator::create(options_for("nojoin", 0, 2, milliseconds(300)));
  CHECK(made.status().code() == StatusCode::kDeadlineExceeded);
  CHECK(Clock::now() - start < milliseconds(3000));
  CHECK_FALSE(std::filesystem::exists("/dev/shm" + options_for("nojoin", 0, 2).name));
}

TEST_CASE("ShmCommunicator: a rank that stops calling fails the others within the deadline") {
  auto comms = make_group("silent", 3, milliseconds(400));
  std::vector<Status> results(3);
  auto const start = Clock::now();
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {  // rank 2 never calls
    threads.emplace_back([&, r] { results[static_cast<std::size_t>(r)] = comms[r]->barrier(); });
  }
  for (auto& t : threads) {
    t.join();
  }
  CHECK(Clock::now() - start < milliseconds(3000));
  for (int r = 0; r < 2; ++r) {
    StatusCode const code = results[static_cast<std::size_t>(r)].code();
    CHECK((code == StatusCode::kDeadlineExceeded || code == StatusCode::kUnavailable));
  }
  // The group is poisoned: rank 2's next collective fails at once too.
  auto const late = Clock::now();
  CHECK(comms[2]->barrier().code() == StatusCode::kUnavailable);
  CHECK(Clock::now() - late < milliseconds(200));
}

TEST_CASE("ShmCommunicator: a rank process that dies is UNAVAILABLE within a second") {
  ShmCommunicatorOptions parent = options_for("dies", 0, 2, milliseconds(20000));
  pid_t const child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ShmCommunicatorOptions o = parent;
    o.rank = 1;
    auto made = ShmCommunicator::create(o);
    if (!made.ok()) {
      ::_exit(2);
    }
    std::vector<float> v = {1.0f};
    (void)(*made)->all_reduce_sum(v);  // one collective, then die without another
    ::_exit(0);
  }
  auto made = ShmCommunicator::create(parent);
  REQUIRE(made.ok());
  std::vector<float> v = {2.0f};
  REQUIRE((*made)->all_reduce_sum(v).ok());
  CHECK(v[0] == 3.0f);
  auto const start = Clock::now();
  Status const status = (*made)->barrier();  // the child is gone (a zombie until reaped)
  CHECK(status.code() == StatusCode::kUnavailable);
  CHECK(Clock::now() - start < milliseconds(1000));
  INFO(status.to_string());
  int wstatus = 0;
  ::waitpid(child, &wstatus, 0);
  CHECK(WIFEXITED(wstatus));
  CHECK(WEXITSTATUS(wstatus) == 0);
}

}  // namespace
}  // namespace gcmoe::runtime
