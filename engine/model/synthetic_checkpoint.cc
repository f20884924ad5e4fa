#include "engine/model/synthetic_checkpoint.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "engine/checkpoint/safetensors_writer.h"
#include "engine/common/check.h"
#include "engine/tiny/make_tiny.h"

namespace gcmoe::model {
namespace {

using checkpoint::DType;

// Bytes one work item fills and writes; a multiple of every element size.
constexpr std::int64_t kChunkBytes = 16LL << 20;
// weight_scale_inv of trained FP8 weights: max|w| / 448 with |w| ~ 0.05–0.15.
constexpr float kScaleInvLo = 1e-4F;
constexpr float kScaleInvHi = 3e-4F;

enum class Fill { kRawBytes, kE4m3, kE8m0, kScaleInv, kBf16, kF32, kExpertTable };

struct Tensor {
  std::string name;
  DType dtype = DType::kU8;
  std::vector<std::int64_t> shape;
  std::int64_t bytes = 0;
  Fill fill = Fill::kRawBytes;
  double lo = 0.0;  // value range of kBf16 / kF32; experts of kExpertTable in `lo`
  double hi = 0.0;
  int shard = 0;
  std::uint64_t file_offset = 0;
};

// RAII for a POSIX file descriptor.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  FileDescriptor& operator=(FileDescriptor&&) = delete;
  FileDescriptor(FileDescriptor const&) = delete;
  FileDescriptor& operator=(FileDescriptor const&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) {
      ::close(fd_);
    }
  }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
};

std::uint64_t splitmix(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

double unit(std::uint64_t const bits) {  // [0, 1) from the top 53 bits
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

// A normal(mean, std) init becomes uniform with the same mean and std: the loader does not care
// about the shape of the distribution, only that the bytes are plausible and not constant.
std::pair<double, double> value_range(tiny::Init const& init) {
  switch (init.kind) {
    case tiny::InitKind::kNormal:
      return {init.a - std::sqrt(3.0) * init.b, init.a + std::sqrt(3.0) * init.b};
    case tiny::InitKind::kUniform:
    case tiny::InitKind::kExpertTable:
      return {init.a, init.b};
  }
  return {0.0, 1.0};
}

std::vector<Tensor> list_tensors(tiny::TensorPlan const& plan) {
  std::vector<Tensor> tensors;
  for (tiny::PlannedTensor const& planned : plan.tensors()) {
    std::vector<tiny::StoredTensor> const stored = tiny::stored_tensors(planned);
    for (std::size_t i = 0; i < stored.size(); ++i) {
      Tensor t{stored[i].name, stored[i].dtype, stored[i].shape};
      t.bytes = checkpoint::dtype_size(t.dtype);
      for (std::int64_t const d : t.shape) {
        t.bytes *= d;
      }
      auto const [lo, hi] = value_range(planned.init);
      t.lo = lo;
      t.hi = hi;
      switch (t.dtype) {
        case DType::kF8E4M3:
          t.fill = Fill::kE4m3;
          break;
        case DType::kF8E8M0:
          t.fill = Fill::kE8m0;
          break;
        case DType::kF32:
          t.fill = i == 1 ? Fill::kScaleInv : Fill::kF32;
          break;
        case DType::kBf16:
          t.fill = Fill::kBf16;
          break;
        case DType::kI64:
          t.fill = Fill::kExpertTable;
          t.lo = planned.init.a;
          break;
        case DType::kI8:
        case DType::kU8:
          t.fill = Fill::kRawBytes;  // packed e2m1 pairs: every byte is valid
          break;
      }
      tensors.push_back(std::move(t));
    }
  }
  return tensors;
}

// Fills `out`, which starts at byte `start` of `t`, from `state`.
void fill(Tensor const& t, std::int64_t const start, std::span<std::byte> out,
          std::uint64_t state) {
  auto* const b = reinterpret_cast<std::uint8_t*>(out.data());
  std::size_t const n = out.size();
  switch (t.fill) {
    case Fill::kRawBytes:
    case Fill::kE4m3:
    case Fill::kE8m0:
      for (std::size_t i = 0; i < n; i += 8) {
        std::uint64_t const r = splitmix(state);
        std::memcpy(b + i, &r, std::min<std::size_t>(8, n - i));
      }
      if (t.fill == Fill::kE4m3) {
        for (std::size_t i = 0; i < n; ++i) {
          b[i] &= 0xBF;  // top exponent bit clear: |x| < 2, never the NaN codes 0x7F / 0xFF
        }
      } else if (t.fill == Fill::kE8m0) {
        for (std::size_t i = 0; i < n; ++i) {
          b[i] = static_cast<std::uint8_t>(117 + (b[i] & 7));  // 2^-10 .. 2^-3
        }
      }
      return;
    case Fill::kScaleInv:
    case Fill::kF32:
      for (std::size_t i = 0; i + 4 <= n; i += 4) {
        double const u = unit(splitmix(state));
        float const v = t.fill == Fill::kScaleInv
                            ? kScaleInvLo + (kScaleInvHi - kScaleInvLo) * static_cast<float>(u)
                            : static_cast<float>(t.lo + (t.hi - t.lo) * u);
        std::memcpy(b + i, &v, 4);
      }
      return;
    case Fill::kBf16:
      for (std::size_t i = 0; i + 2 <= n; i += 2) {
        auto const v = static_cast<float>(t.lo + (t.hi - t.lo) * unit(splitmix(state)));
        auto const bits = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(v) >> 16);
        std::memcpy(b + i, &bits, 2);
      }
      return;
    case Fill::kExpertTable: {
      // Row r holds experts (r + j) mod E for j < k: distinct within the row, all in range.
      std::int64_t const k = t.shape.at(1);
      auto const experts = static_cast<std::int64_t>(t.lo);
      for (std::size_t i = 0; i + 8 <= n; i += 8) {
        std::int64_t const element = (start + static_cast<std::int64_t>(i)) / 8;
        std::int64_t const v = (element / k + element % k) % experts;
        std::memcpy(b + i, &v, 8);
      }
      return;
    }
  }
}

// Assigns shards (a shard closes when the next tensor would overflow it) and writes each shard's
// header; returns the shard file names.
StatusOr<std::vector<std::string>> write_headers(std::vector<Tensor>& tensors,
                                                 std::filesystem::path const& dir,
                                                 std::int64_t const max_shard_bytes,
                                                 std::vector<FileDescriptor>& files) {
  std::vector<std::vector<Tensor*>> shards;
  std::int64_t shard_bytes = 0;
  for (Tensor& t : tensors) {
    if (shards.empty() || (shard_bytes > 0 && shard_bytes + t.bytes > max_shard_bytes)) {
      shards.emplace_back();
      shard_bytes = 0;
    }
    t.shard = static_cast<int>(shards.size()) - 1;
    shards.back().push_back(&t);
    shard_bytes += t.bytes;
  }
  std::vector<std::string> names;
  int const count = static_cast<int>(shards.size());
  for (int k = 0; k < count; ++k) {
    nlohmann::ordered_json header = {{"__metadata__", {{"format", "pt"}}}};
    std::uint64_t offset = 0;
    for (Tensor* t : shards[static_cast<std::size_t>(k)]) {
      t->file_offset = offset;  // in the data section until the header size is known
      std::uint64_t const end = offset + static_cast<std::uint64_t>(t->bytes);
      header[t->name] = {{"dtype", checkpoint::dtype_name(t->dtype)},
                         {"shape", t->shape},
                         {"data_offsets", {offset, end}}};
      offset = end;
    }
    std::string text = header.dump();
    text.append((8 - (text.size() % 8)) % 8, ' ');  // data section 8-byte aligned
    std::uint64_t const data_start = 8 + text.size();
    for (Tensor* t : shards[static_cast<std::size_t>(k)]) {
      t->file_offset += data_start;
    }
    names.push_back(checkpoint::shard_file_name(k + 1, count));
    std::filesystem::path const path = dir / names.back();
    int const fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      return unavailable_error(
          fmt::format("cannot create {}: {}", path.string(), std::strerror(errno)));
    }
    files.emplace_back(fd);
    std::string prefix(8, '\0');
    for (int i = 0; i < 8; ++i) {
      prefix[static_cast<std::size_t>(i)] = static_cast<char>((text.size() >> (8 * i)) & 0xffU);
    }
    prefix += text;
    if (::pwrite(fd, prefix.data(), prefix.size(), 0) != static_cast<ssize_t>(prefix.size()) ||
        ::ftruncate(fd, static_cast<off_t>(data_start + offset)) != 0) {
      return data_loss_error(
          fmt::format("writing {} failed: {}", path.string(), std::strerror(errno)));
    }
  }
  return names;
}

struct Chunk {
  std::size_t tensor = 0;
  std::int64_t start = 0;  // byte inside the tensor
  std::int64_t bytes = 0;
};

Status fill_and_write(std::vector<Tensor> const& tensors, std::vector<FileDescriptor> const& files,
                      std::uint64_t const seed, int const threads) {
  std::vector<Chunk> chunks;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    for (std::int64_t at = 0; at < tensors[i].bytes; at += kChunkBytes) {
      chunks.push_back({i, at, std::min(kChunkBytes, tensors[i].bytes - at)});
    }
  }
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;
  Status first_error;
  {
    std::vector<std::jthread> pool;
    for (int w = 0; w < threads; ++w) {
      pool.emplace_back([&] {
        std::vector<std::byte> buffer(static_cast<std::size_t>(kChunkBytes));
        while (!failed.load(std::memory_order_relaxed)) {
          std::size_t const c = next.fetch_add(1);
          if (c >= chunks.size()) {
            return;
          }
          Chunk const& chunk = chunks[c];
          Tensor const& t = tensors[chunk.tensor];
          std::span<std::byte> const out(buffer.data(), static_cast<std::size_t>(chunk.bytes));
          // The stream depends on (seed, tensor, chunk) only, not on thread scheduling.
          fill(t, chunk.start, out, seed ^ (chunk.tensor * 0xD1B54A32D192ED03ULL) ^ c);
          auto const written =
              ::pwrite(files[static_cast<std::size_t>(t.shard)].fd(), out.data(), out.size(),
                       static_cast<off_t>(t.file_offset + chunk.start));
          if (written != static_cast<ssize_t>(out.size())) {
            std::lock_guard<std::mutex> const lock(mutex);
            first_error = data_loss_error(
                fmt::format("writing tensor '{}': {}", t.name, std::strerror(errno)));
            failed = true;
          }
        }
      });
    }
  }
  return first_error;
}

Status write_text(std::filesystem::path const& path, std::string const& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text << '\n';
  out.close();
  return out ? Status() : data_loss_error(fmt::format("writing {} failed", path.string()));
}

}  // namespace

StatusOr<SyntheticSummary> write_synthetic_checkpoint(nlohmann::json const& config_json,
                                                      std::filesystem::path const& dir,
                                                      std::uint64_t const seed, int const threads,
                                                      std::int64_t const max_shard_bytes) {
  GCMOE_CHECK_ARG(max_shard_bytes > 0, "max_shard_bytes must be positive");
  auto const start = std::chrono::steady_clock::now();
  GCMOE_ASSIGN_OR_RETURN(tiny::TensorPlan const plan, tiny::plan_from_config(config_json));
  std::vector<Tensor> tensors = list_tensors(plan);
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return unavailable_error(fmt::format("cannot create {}: {}", dir.string(), error.message()));
  }
  std::vector<FileDescriptor> files;
  GCMOE_ASSIGN_OR_RETURN(std::vector<std::string> const shards,
                         write_headers(tensors, dir, max_shard_bytes, files));
  int const workers =
      threads > 0 ? threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  GCMOE_RETURN_IF_ERROR(fill_and_write(tensors, files, seed, workers));

  SyntheticSummary summary;
  nlohmann::ordered_json weight_map = nlohmann::ordered_json::object();
  for (Tensor const& t : tensors) {
    weight_map[t.name] = shards[static_cast<std::size_t>(t.shard)];
    summary.bytes += t.bytes;
  }
  nlohmann::ordered_json const index = {{"metadata", {{"total_size", summary.bytes}}},
                                        {"weight_map", std::move(weight_map)}};
  GCMOE_RETURN_IF_ERROR(write_text(dir / checkpoint::kIndexFileName, index.dump(2)));
  GCMOE_RETURN_IF_ERROR(write_text(dir / "config.json", config_json.dump(2)));
  summary.tensors = static_cast<std::int64_t>(tensors.size());
  summary.shards = static_cast<std::int64_t>(shards.size());
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

Status drop_page_cache(std::filesystem::path const& dir) {
  std::error_code error;
  for (auto const& entry : std::filesystem::directory_iterator(dir, error)) {
    if (!entry.is_regular_file()) {
      continue;
    }
    FileDescriptor const file(::open(entry.path().c_str(), O_RDONLY | O_CLOEXEC));
    if (file.fd() < 0 || ::fdatasync(file.fd()) != 0 ||
        ::posix_fadvise(file.fd(), 0, 0, POSIX_FADV_DONTNEED) != 0) {
      return unavailable_error(fmt::format("dropping {} from the page cache: {}",
                                           entry.path().string(), std::strerror(errno)));
    }
  }
  if (error) {
    return unavailable_error(fmt::format("listing {}: {}", dir.string(), error.message()));
  }
  return Status();
}

}  // namespace gcmoe::model
