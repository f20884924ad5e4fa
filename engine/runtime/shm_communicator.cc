#include "engine/runtime/shm_communicator.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <thread>

#include "engine/common/check.h"

namespace gcmoe::runtime {
namespace {

constexpr std::uint64_t kMagic = 0x67636d6f65736d31;  // "gcmoesm1"
constexpr std::size_t kAlign = 64;
constexpr std::size_t kPoisonReasonBytes = 256;
constexpr std::int32_t kNotPoisoned = 0;
constexpr std::int32_t kPoisonWriting = 1;
constexpr std::int32_t kPoisoned = 2;
// Waits spin (yielding) this many times before they sleep; a lockstep step is usually short.
constexpr int kSpinsBeforeSleep = 200;
constexpr std::chrono::microseconds kMinSleep{20};
constexpr std::chrono::microseconds kMaxSleep{500};
// How often a waiting rank checks that the ranks it waits for still exist.
constexpr std::chrono::milliseconds kLivenessPeriod{10};

std::size_t round_up(std::size_t n) {
  return (n + kAlign - 1) / kAlign * kAlign;
}

// A process that no longer runs: gone, or a zombie its parent has not reaped yet.
bool process_dead(std::int64_t pid) {
  if (pid <= 0) {
    return false;  // not joined yet
  }
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
    return true;
  }
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) {
    return true;
  }
  // "pid (comm) S ...": the state follows the last ')'.
  std::size_t const paren = line.rfind(')');
  if (paren == std::string::npos || paren + 2 >= line.size()) {
    return false;
  }
  char const state = line[paren + 2];
  return state == 'Z' || state == 'X';
}

}  // namespace

struct ShmCommunicator::Header {
  std::atomic<std::uint64_t> magic;
  std::uint64_t session;
  std::int32_t world_size;
  std::uint64_t slot_bytes;
  std::atomic<std::int32_t> poisoned;
  char poison_reason[kPoisonReasonBytes];
};

struct RankState {
  std::atomic<std::int64_t> pid;
  std::atomic<std::uint64_t> posted;  // number of the last collective this rank posted
};

struct ShmCommunicator::RankSlot {
  std::uint64_t size;  // payload bytes of this round
  std::uint64_t more;  // bytes this rank still has to send after this round
  // slot_bytes of payload follow, at kAlign.
};

namespace {

// The header region; RankState array follows it.
constexpr std::size_t kHeaderRegion = 512;

std::size_t header_bytes() {
  return kHeaderRegion;
}

}  // namespace

ShmCommunicator::ShmCommunicator(ShmCommunicatorOptions const& options) : options_(options) {}

ShmCommunicator::~ShmCommunicator() {
  if (base_ != nullptr) {
    ::munmap(base_, bytes_);
  }
}

StatusOr<std::unique_ptr<ShmCommunicator>> ShmCommunicator::create(
    ShmCommunicatorOptions const& options) {
  GCMOE_CHECK_ARG(options.world_size >= 1, "world_size must be >= 1, got {}", options.world_size);
  GCMOE_CHECK_ARG(options.rank >= 0 && options.rank < options.world_size,
                  "rank {} is outside the group of {}", options.rank, options.world_size);
  GCMOE_CHECK_ARG(options.name.size() > 1 && options.name[0] == '/' &&
                      options.name.find('/', 1) == std::string::npos,
                  "shm name '{}' must be '/' followed by a name without '/'", options.name);
  GCMOE_CHECK_ARG(options.slot_bytes > 0, "slot_bytes must be > 0");
  std::unique_ptr<ShmCommunicator> self(new ShmCommunicator(options));
  // Rank 0 unlinks the name when create() returns, joined or not: once every rank has mapped the
  // segment the name is not needed, and without it nothing is left in /dev/shm however the ranks
  // end (SIGKILL included).
  struct UnlinkName {
    ShmCommunicatorOptions const& options;
    ~UnlinkName() {
      if (options.rank == 0) {
        ::shm_unlink(options.name.c_str());
      }
    }
  } const unlink_name{options};
  GCMOE_RETURN_IF_ERROR(self->map_segment(options.rank == 0));
  // The first barrier is the join: every rank present, pid published.
  auto const deadline = std::chrono::steady_clock::now() + options.join_timeout;
  ++self->ops_;
  auto* states =
      reinterpret_cast<RankState*>(static_cast<std::byte*>(self->base_) + header_bytes());
  states[options.rank].posted.store(self->ops_, std::memory_order_release);
  Status const joined = self->wait_for_all(self->ops_, deadline);
  if (!joined.ok()) {
    return joined.with_context(fmt::format("rank {} of {} joining shm group {}", options.rank,
                                           options.world_size, options.name));
  }
  return self;
}

Status ShmCommunicator::map_segment(bool create) {
  std::size_t const slot_stride = round_up(sizeof(RankSlot)) + round_up(options_.slot_bytes);
  std::size_t const world = static_cast<std::size_t>(options_.world_size);
  bytes_ = header_bytes() + round_up(world * sizeof(RankState)) + 2 * world * slot_stride;
  static_assert(sizeof(Header) <= kHeaderRegion);

  auto const deadline = std::chrono::steady_clock::now() + options_.join_timeout;
  int fd = -1;
  if (create) {
    ::shm_unlink(options_.name.c_str());  // a leftover of a crashed group
    fd = ::shm_open(options_.name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) {
      return unavailable_error(
          fmt::format("shm_open({}) failed: {}", options_.name, std::strerror(errno)));
    }
    if (::ftruncate(fd, static_cast<off_t>(bytes_)) != 0) {
      ::close(fd);
      return resource_exhausted_error(fmt::format("cannot size shm {} to {} bytes: {}",
                                                  options_.name, bytes_, std::strerror(errno)));
    }
  } else {
    // Wait for rank 0 to create the segment at its full size.
    while (true) {
      fd = ::shm_open(options_.name.c_str(), O_RDWR, 0600);
      if (fd >= 0) {
        struct stat st {};
        if (::fstat(fd, &st) == 0 && static_cast<std::size_t>(st.st_size) >= bytes_) {
          break;
        }
        ::close(fd);
        fd = -1;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        return deadline_exceeded_error(fmt::format("shm segment {} did not appear within {} ms",
                                                   options_.name, options_.join_timeout.count()));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  void* base = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (base == MAP_FAILED) {
    return unavailable_error(fmt::format("mmap of shm {} ({} bytes) failed: {}", options_.name,
                                         bytes_, std::strerror(errno)));
  }
  base_ = base;
  auto* header = static_cast<Header*>(base_);
  auto* states = reinterpret_cast<RankState*>(static_cast<std::byte*>(base_) + header_bytes());
  if (create) {
    // ftruncate zero-filled the segment: atomics start at 0.
    header->session = options_.session;
    header->world_size = options_.world_size;
    header->slot_bytes = options_.slot_bytes;
    states[0].pid.store(::getpid(), std::memory_order_relaxed);
    header->magic.store(kMagic, std::memory_order_release);
    return Status();
  }
  // Rank 0 publishes magic last; a segment of a previous group has another session.
  while (header->magic.load(std::memory_order_acquire) != kMagic ||
         header->session != options_.session) {
    if (std::chrono::steady_clock::now() > deadline) {
      return deadline_exceeded_error(
          fmt::format("shm segment {} was not initialised for session {} within {} ms",
                      options_.name, options_.session, options_.join_timeout.count()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  GCMOE_CHECK_ARG(
      header->world_size == options_.world_size && header->slot_bytes == options_.slot_bytes,
      "shm segment {} is for {} ranks x {} bytes, this rank expects {} x {}", options_.name,
      header->world_size, header->slot_bytes, options_.world_size, options_.slot_bytes);
  states[options_.rank].pid.store(::getpid(), std::memory_order_release);
  return Status();
}

ShmCommunicator::RankSlot& ShmCommunicator::slot(std::uint64_t op, std::int32_t rank) const {
  std::size_t const world = static_cast<std::size_t>(options_.world_size);
  std::size_t const slot_stride = round_up(sizeof(RankSlot)) + round_up(options_.slot_bytes);
  std::size_t const index = (op % 2) * world + static_cast<std::size_t>(rank);
  std::byte* const slots =
      static_cast<std::byte*>(base_) + header_bytes() + round_up(world * sizeof(RankState));
  return *reinterpret_cast<RankSlot*>(slots + index * slot_stride);
}

void ShmCommunicator::poison(std::string const& reason) {
  auto* header = static_cast<Header*>(base_);
  std::int32_t expected = kNotPoisoned;
  if (header->poisoned.compare_exchange_strong(expected, kPoisonWriting)) {
    std::string const text = fmt::format("rank {}: {}", options_.rank, reason);
    std::size_t const n = std::min(text.size(), kPoisonReasonBytes - 1);
    std::memcpy(header->poison_reason, text.data(), n);
    header->poison_reason[n] = '\0';
    header->poisoned.store(kPoisoned, std::memory_order_release);
  }
}

Status ShmCommunicator::fail(Status status) {
  poison(status.message());
  return status;
}

Status ShmCommunicator::wait_for_all(std::uint64_t op,
                                     std::chrono::steady_clock::time_point deadline) {
  auto* header = static_cast<Header*>(base_);
  auto* states = reinterpret_cast<RankState*>(static_cast<std::byte*>(base_) + header_bytes());
  int spins = 0;
  auto sleep = kMinSleep;
  auto next_liveness = std::chrono::steady_clock::now() + kLivenessPeriod;
  while (true) {
    // A failed group stays failed: ranks that gave up may have posted, their data is moot.
    std::int32_t const poisoned = header->poisoned.load(std::memory_order_acquire);
    if (poisoned != kNotPoisoned) {
      std::string const why =
          poisoned == kPoisoned ? std::string(header->poison_reason) : std::string("a rank failed");
      return unavailable_error(fmt::format("shm group {} failed: {}", options_.name, why));
    }
    std::int32_t missing = -1;
    for (std::int32_t r = 0; r < options_.world_size; ++r) {
      if (states[r].posted.load(std::memory_order_acquire) < op) {
        missing = r;
        break;
      }
    }
    if (missing < 0) {
      return Status();
    }
    if (spins < kSpinsBeforeSleep) {
      ++spins;
      std::this_thread::yield();
      continue;
    }
    auto const now = std::chrono::steady_clock::now();
    if (now >= next_liveness) {
      next_liveness = now + kLivenessPeriod;
      for (std::int32_t r = 0; r < options_.world_size; ++r) {
        if (states[r].posted.load(std::memory_order_acquire) < op &&
            process_dead(states[r].pid.load(std::memory_order_acquire))) {
          return fail(unavailable_error(
              fmt::format("rank {} (pid {}) of shm group {} died before collective {}", r,
                          states[r].pid.load(), options_.name, op)));
        }
      }
    }
    if (now > deadline) {
      return fail(deadline_exceeded_error(
          fmt::format("rank {} did not reach collective {} of shm group {} in time (rank {} "
                      "waited {} ms)",
                      missing, op, options_.name, options_.rank, options_.timeout.count())));
    }
    std::this_thread::sleep_for(sleep);
    sleep = std::min(sleep * 2, kMaxSleep);
  }
}

Status ShmCommunicator::all_gather(std::span<std::byte const> mine, std::vector<std::byte>& all,
                                   std::vector<std::size_t>& sizes) {
  auto* states = reinterpret_cast<RankState*>(static_cast<std::byte*>(base_) + header_bytes());
  std::size_t const world = static_cast<std::size_t>(options_.world_size);
  std::vector<std::vector<std::byte>> parts(world);
  std::size_t sent = 0;
  // Rounds of at most slot_bytes per rank, until no rank has bytes left; every rank reads the
  // same `more` fields, so all agree on the number of rounds.
  while (true) {
    auto const deadline = std::chrono::steady_clock::now() + options_.timeout;
    std::size_t const chunk = std::min(mine.size() - sent, options_.slot_bytes);
    std::uint64_t const op = ++ops_;
    RankSlot& own = slot(op, options_.rank);
    own.size = chunk;
    own.more = mine.size() - sent - chunk;
    if (chunk > 0) {
      std::memcpy(reinterpret_cast<std::byte*>(&own) + round_up(sizeof(RankSlot)),
                  mine.data() + sent, chunk);
    }
    sent += chunk;
    states[options_.rank].posted.store(op, std::memory_order_release);
    GCMOE_RETURN_IF_ERROR(wait_for_all(op, deadline));
    bool more = false;
    for (std::size_t r = 0; r < world; ++r) {
      RankSlot const& other = slot(op, static_cast<std::int32_t>(r));
      auto const* data = reinterpret_cast<std::byte const*>(&other) + round_up(sizeof(RankSlot));
      parts[r].insert(parts[r].end(), data, data + other.size);
      more = more || other.more > 0;
    }
    if (!more) {
      break;
    }
  }
  sizes.assign(world, 0);
  all.clear();
  for (std::size_t r = 0; r < world; ++r) {
    sizes[r] = parts[r].size();
    all.insert(all.end(), parts[r].begin(), parts[r].end());
  }
  return Status();
}

Status ShmCommunicator::all_reduce_sum(std::span<float> data) {
  std::vector<std::byte> all;
  std::vector<std::size_t> sizes;
  GCMOE_RETURN_IF_ERROR(all_gather(std::as_bytes(data), all, sizes));
  for (std::size_t r = 0; r < sizes.size(); ++r) {
    if (sizes[r] != data.size_bytes()) {
      return fail(invalid_argument_error(
          fmt::format("all_reduce_sum: rank {} passed {} bytes, rank {} passed {}", r, sizes[r],
                      options_.rank, data.size_bytes())));
    }
  }
  // Rank order on every rank: bit-identical sums everywhere.
  std::vector<float> sum(data.size(), 0.0f);
  auto const* values = reinterpret_cast<float const*>(all.data());
  for (std::size_t r = 0; r < sizes.size(); ++r) {
    for (std::size_t i = 0; i < data.size(); ++i) {
      sum[i] += values[r * data.size() + i];
    }
  }
  std::copy(sum.begin(), sum.end(), data.begin());
  return Status();
}

Status ShmCommunicator::barrier() {
  std::vector<std::byte> all;
  std::vector<std::size_t> sizes;
  return all_gather({}, all, sizes);
}

}  // namespace gcmoe::runtime
